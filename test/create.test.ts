import t from 'tap'
import { assertError, postPlant, testApp } from './helpers/app.ts'

t.test('a valid NewPlant answers 200 with the Plant, never the id', async (t) => {
  const app = await testApp(t)
  const res = await postPlant(app, { id: 1, name: 'Monstera', tag: 'tropical' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  t.same(res.json(), { name: 'Monstera', tag: 'tropical' })
})

t.test('tag is optional and absent from the answer when not sent', async (t) => {
  const app = await testApp(t)
  const res = await postPlant(app, { id: 2, name: 'Fern' })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '{"name":"Fern"}')
})

t.test('fields other than name and tag are not echoed', async (t) => {
  const app = await testApp(t)
  const res = await postPlant(app, { id: 3, name: 'Cactus', tag: 'desert', secret: 'x', nested: { a: 1 } })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '{"name":"Cactus","tag":"desert"}')
})

t.test('unicode names and tags round-trip unchanged', async (t) => {
  const app = await testApp(t)
  const plant = { id: 4, name: 'Ficus 🌿 «lyrata» 榕树 \u0000 \\ "q"', tag: 'Zimmerpflanze — ä ö ü ß' }
  const res = await postPlant(app, plant)
  t.equal(res.statusCode, 200)
  t.same(res.json(), { name: plant.name, tag: plant.tag })
})

t.test('int64 edges are accepted exactly', async (t) => {
  const app = await testApp(t)
  for (const id of ['9223372036854775807', '-9223372036854775808', '0', '-1', '9007199254740991']) {
    const res = await postPlant(app, `{"id":${id},"name":"edge ${id}"}`)
    t.equal(res.statusCode, 200, `id ${id}`)
  }
  // A retry with a different name proves the id was stored exactly, not rounded.
  assertError(t, await postPlant(app, '{"id":9223372036854775807,"name":"other"}'), 409)
  assertError(t, await postPlant(app, '{"id":-9223372036854775808,"name":"other"}'), 409)
})

t.test('ids beyond 2^53 stay distinct', async (t) => {
  const app = await testApp(t)
  // As doubles, all three of these are 9007199254740992.
  t.equal((await postPlant(app, '{"id":9007199254740992,"name":"a"}')).statusCode, 200)
  t.equal((await postPlant(app, '{"id":9007199254740993,"name":"b"}')).statusCode, 200)
  t.equal((await postPlant(app, '{"id":9007199254740993.0,"name":"b"}')).statusCode, 200, 'same integer written as a decimal is a retry')
  t.equal((await postPlant(app, '{"id":9.007199254740993e15,"name":"b"}')).statusCode, 200, 'and written with an exponent')
  assertError(t, await postPlant(app, '{"id":9007199254740993,"name":"a"}'), 409)
  t.equal((await postPlant(app, '{"id":9223372036854775806,"name":"c"}')).statusCode, 200)
  t.equal((await postPlant(app, '{"id":9223372036854775807,"name":"d"}')).statusCode, 200)
})

t.test('an id written as 1e3 or 5.0 is the integer it denotes', async (t) => {
  const app = await testApp(t)
  t.equal((await postPlant(app, '{"id":1e3,"name":"thousand"}')).statusCode, 200)
  assertError(t, await postPlant(app, '{"id":1000,"name":"other"}'), 409)
  t.equal((await postPlant(app, '{"id":5.0,"name":"five"}')).statusCode, 200)
})

t.test('Content-Type parameters such as charset are accepted', async (t) => {
  const app = await testApp(t)
  const res = await postPlant(app, { id: 7, name: 'Ivy' }, { 'content-type': 'application/json; charset=utf-8' })
  t.equal(res.statusCode, 200)
})
