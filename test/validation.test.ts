import t from 'tap'
import { assertError, postPlant, testApp } from './helpers/app.ts'

// Every body that is not a NewPlant answers 400 in the Error shape, with a message
// naming what is wrong. Fastify's defaults would coerce several of these into 200s.
const badBodies: Array<[string, string, RegExp]> = [
  ['id as a string', '{"id":"5","name":"a"}', /body\/id must be an integer/],
  ['id as a boolean', '{"id":true,"name":"a"}', /body\/id must be an integer/],
  ['id null', '{"id":null,"name":"a"}', /body\/id must be an integer/],
  ['id a fraction', '{"id":1.5,"name":"a"}', /body\/id must be an integer/],
  ['id 1e300', '{"id":1e300,"name":"a"}', /body\/id must be an integer from -9223372036854775808 to 9223372036854775807/],
  ['id 1e400 (infinite as a double)', '{"id":1e400,"name":"a"}', /body\/id must be an integer/],
  ['id int64 max + 1', '{"id":9223372036854775808,"name":"a"}', /body\/id must be an integer from/],
  ['id int64 min - 1', '{"id":-9223372036854775809,"name":"a"}', /body\/id must be an integer from/],
  ['id a fraction a double would round to an integer', '{"id":4503599627370496.5,"name":"a"}', /4503599627370496\.5 is not an integer/],
  ['id a tiny fraction', '{"id":1.00000000000000000001,"name":"a"}', /is not an integer/],
  ['id missing', '{"name":"a"}', /body\/id is required/],
  ['name missing', '{"id":1}', /body\/name is required/],
  ['name a number', '{"id":1,"name":123}', /body\/name must be a string/],
  ['name null', '{"id":1,"name":null}', /body\/name must be a string/],
  ['name a boolean', '{"id":1,"name":true}', /body\/name must be a string/],
  ['tag a number', '{"id":1,"name":"a","tag":5}', /body\/tag must be a string/],
  ['tag null', '{"id":1,"name":"a","tag":null}', /body\/tag must be a string/],
  ['both fields wrong, both named', '{"id":"x","name":1}', /body\/id .*body\/name|body\/name .*body\/id/],
  ['an array', '[{"id":1,"name":"a"}]', /body must be a JSON object/],
  ['a string', '"plant"', /body must be a JSON object/],
  ['null', 'null', /body must be a JSON object; it is empty or null/],
  ['a number', '5', /body must be a JSON object/],
  ['malformed JSON', '{"id":1,', /not valid JSON/],
  ['trailing garbage', '{"id":1,"name":"a"} x', /not valid JSON/],
  ['single quotes', "{'id':1,'name':'a'}", /not valid JSON/],
  ['a lone surrogate', '{"id":1,"name":"\\ud800"}', /lone UTF-16 surrogate/],
  ['__proto__ key', '{"id":1,"name":"a","__proto__":{"admin":true}}', /forbidden prototype property/],
  ['constructor.prototype key', '{"id":1,"name":"a","constructor":{"prototype":{"x":1}}}', /forbidden prototype property/],
  ['a leading-zero number with many digits', '{"id":01234567890123456789,"name":"a"}', /not valid JSON/]
]

t.test('bodies that are not a NewPlant answer 400 with a message naming the problem', async (t) => {
  const app = await testApp(t)
  for (const [what, body, message] of badBodies) {
    await t.test(what, async (t) => {
      t.match(assertError(t, await postPlant(app, body), 400), message)
    })
  }
})

t.test('an empty body answers 400', async (t) => {
  const app = await testApp(t)
  t.match(assertError(t, await postPlant(app, ''), 400), /body must be a JSON object; it is empty or null/)
  t.match(assertError(t, await postPlant(app, '  \n'), 400), /body must be a JSON object; it is empty or null/)
  const noType = await app.inject({ method: 'POST', url: '/plants', headers: { authorization: 'Bearer test-token-0123456789' } })
  t.match(assertError(t, noType, 400), /body must be a JSON object; it is empty or null/)
})

t.test('a body that is not UTF-8 answers 400 instead of being silently replaced', async (t) => {
  const app = await testApp(t)
  const payload = Buffer.concat([Buffer.from('{"id":1,"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')])
  t.match(assertError(t, await postPlant(app, payload), 400), /not valid UTF-8/)
})

t.test('a rejected body stores nothing', async (t) => {
  const app = await testApp(t)
  assertError(t, await postPlant(app, '{"id":"8","name":"wrong"}'), 400)
  t.equal((await postPlant(app, { id: 8, name: 'right' })).statusCode, 200, 'id 8 is still free')
})

t.test('digits inside strings do not disturb exact parsing', async (t) => {
  const app = await testApp(t)
  const res = await postPlant(app, '{"name":"12345678901234567890 \\"1e5\\"","id":12345678901234567890,"tag":"9007199254740993"}')
  assertError(t, res, 400) // the id is beyond int64: strings around it are left alone
  const ok = await postPlant(app, '{"name":"12345678901234567890","id":1234567890123456789,"tag":"1e5"}')
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { name: '12345678901234567890', tag: '1e5' })
})
