import type { Test } from 'tap'
import { assertError, postPlant, testApp } from './app.js'

/**
 * The behaviour every store engine must show, through HTTP. Each engine's test file
 * runs this with the DATABASE_URL that selects it, so the engines cannot drift apart.
 */
export function storeSuite (t: Test, databaseUrl: (t: Test) => Promise<string>): void {
  const app = async (t: Test) => await testApp(t, { DATABASE_URL: await databaseUrl(t) })

  t.test('a created plant is there: the same plant again is a 200 retry, another is a 409', async (t) => {
    const store = await app(t)
    t.equal((await postPlant(store, { id: 10, name: 'Aloe', tag: 'succulent' })).statusCode, 200)
    const retry = await postPlant(store, { id: 10, name: 'Aloe', tag: 'succulent' })
    t.equal(retry.statusCode, 200)
    t.same(retry.json(), { name: 'Aloe', tag: 'succulent' })
    assertError(t, await postPlant(store, { id: 10, name: 'Agave', tag: 'succulent' }), 409)
    assertError(t, await postPlant(store, { id: 10, name: 'Aloe' }), 409)
    t.equal((await postPlant(store, { id: 11, name: 'Aloe' })).statusCode, 200)
    assertError(t, await postPlant(store, { id: 11, name: 'Aloe', tag: 'succulent' }), 409, 'no tag and a tag differ')
  })

  t.test('ids are exact int64, also beyond 2^53', async (t) => {
    const store = await app(t)
    const ids = ['9223372036854775807', '-9223372036854775808', '9007199254740992', '9007199254740993', '0']
    for (const id of ids) t.equal((await postPlant(store, `{"id":${id},"name":"n${id}"}`)).statusCode, 200, id)
    for (const id of ids) {
      t.equal((await postPlant(store, `{"id":${id},"name":"n${id}"}`)).statusCode, 200, `${id} retried`)
      assertError(t, await postPlant(store, `{"id":${id},"name":"other"}`), 409)
    }
  })

  t.test('concurrent creates of one id with different names: exactly one 200, the rest 409', async (t) => {
    const store = await app(t)
    const responses = await Promise.all(Array.from({ length: 50 }, async (_, i) =>
      await postPlant(store, { id: 77, name: `racer ${i}` })))
    const codes = responses.map((res) => res.statusCode)
    t.equal(codes.filter((c) => c === 200).length, 1, 'one winner')
    t.equal(codes.filter((c) => c === 409).length, 49, 'every other one a conflict')
    const winner = responses.find((res) => res.statusCode === 200)!.json().name
    t.equal((await postPlant(store, { id: 77, name: winner })).statusCode, 200, 'the winner is what was stored')
  })

  t.test('concurrent identical creates all answer 200', async (t) => {
    const store = await app(t)
    const codes = await Promise.all(Array.from({ length: 30 }, async () =>
      (await postPlant(store, { id: 78, name: 'same', tag: 't' })).statusCode))
    t.same(codes, Array(30).fill(200))
  })

  t.test('many concurrent creates of distinct ids are all stored', async (t) => {
    const store = await app(t)
    const codes = await Promise.all(Array.from({ length: 300 }, async (_, i) =>
      (await postPlant(store, { id: 1000 + i, name: `p${i}` })).statusCode))
    t.same(codes, Array(300).fill(200))
    const again = await Promise.all(Array.from({ length: 300 }, async (_, i) =>
      (await postPlant(store, { id: 1000 + i, name: 'other' })).statusCode))
    t.same(again, Array(300).fill(409), 'each is there')
  })

  t.test('names and tags are stored exactly: unicode, NUL, empty strings', async (t) => {
    const store = await app(t)
    const plant = { id: 90, name: 'Ficus 🌿 榕树 \u0000 end', tag: '' }
    t.same((await postPlant(store, plant)).json(), { name: plant.name, tag: '' })
    t.equal((await postPlant(store, plant)).statusCode, 200, 'an exact retry matches what was stored')
    assertError(t, await postPlant(store, { id: 90, name: plant.name }), 409, 'an empty tag is not a missing tag')
  })
}
