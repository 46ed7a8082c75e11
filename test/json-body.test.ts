import assert from 'node:assert/strict'
import { inspect } from 'node:util'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { InvalidJson } from '../src/http/errors.ts'
import { parseJsonBody } from '../src/http/json-body.ts'
import { assertError, postPlant, testApp } from './helpers/app.ts'
import { fuzzSettings } from './helpers/fuzz.ts'
import {
  byteBody, editedJson, editedTokens, jsonishCharacter, jsonValue, members, mustRefuse, numberBody, render, spacedJson, stringBody, whitespace
} from './helpers/fuzz-json-bodies.ts'
import { agreesWithJsonParse, expectedNumber, MAX_MESSAGE_LENGTH, outcome } from './helpers/json-body-reference.ts'

// The body parser against JSON.parse, the reference for what JSON is: on generated
// JSON, near-JSON and garbage, it never accepts what JSON.parse refuses, reads what
// both accept as JSON.parse does (exactly, where JSON.parse rounds), and refuses
// only what it refuses on purpose. Seeded: FUZZ_SEED=<n> replays a run, FUZZ_RUNS=<n>
// sets the runs per property. The generators are in helpers/fuzz-json-bodies.ts, the
// reference check in helpers/json-body-reference.ts.

const { seed, numRuns } = fuzzSettings(500)

const BODY_LIMIT = 16 * 1024 // the default

/** Runs a property with the run's seed; a failure names the seed, the replay path and the counterexample. */
async function holds<Ts> (t: Test, property: fc.IProperty<Ts>): Promise<void> {
  try {
    fc.assert(property, { seed, numRuns })
    t.pass(`${numRuns} runs (FUZZ_SEED=${seed})`)
  } catch (error) {
    t.fail(`FUZZ_SEED=${seed} FUZZ_RUNS=${numRuns}: ${(error as Error).message}`)
  }
}

// --- Properties -------------------------------------------------------------

t.test('every JSON text of a value not refused on purpose is accepted and read as JSON.parse reads it', async (t) => {
  await holds(t, fc.property(jsonValue, fc.array(whitespace, { minLength: 1, maxLength: 8 }), fc.boolean(), (value, spaces, spaced) => {
    const text = spaced ? spacedJson(value, spaces) : JSON.stringify(value)
    const mine = agreesWithJsonParse(Buffer.from(text))
    assert.ok('value' in mine, `refused ${inspect(text.slice(0, 200))}: ${'error' in mine ? mine.error.message : ''}`)
  }))
})

t.test('near-JSON is refused whenever JSON.parse refuses it, and read as JSON.parse reads it otherwise', async (t) => {
  const nearJson = fc.oneof(
    editedJson,
    editedTokens,
    fc.string({ unit: jsonishCharacter, maxLength: 30 }),
    numberBody.map(([literal, place]) => place.replace('%', literal)),
    stringBody
  )
  await holds(t, fc.property(nearJson, (text) => { agreesWithJsonParse(Buffer.from(text)) }))
})

t.test('bytes that are not UTF-8 are refused, wherever they are', async (t) => {
  await holds(t, fc.property(byteBody, (body) => { agreesWithJsonParse(body) }))
})

t.test('number literals are read exactly, or refused for a reason', async (t) => {
  await holds(t, fc.property(numberBody, ([literal, place]) => {
    const text = place.replace('%', literal)
    const mine = agreesWithJsonParse(Buffer.from(text))
    const expected = expectedNumber(literal)
    if (expected === undefined) return
    if ('refused' in expected) {
      assert.ok('error' in mine, `accepted ${text}`)
      assert.match(mine.error.message, expected.refused, text)
      return
    }
    assert.ok('value' in mine, `refused ${text}: ${'error' in mine ? mine.error.message : ''}`)
    const read = place.startsWith('{') ? (mine.value as { id: unknown }).id : Array.isArray(mine.value) ? mine.value.at(-1) : mine.value
    assert.ok(Object.is(read, expected.value), `read ${text} as ${inspect(read)}, not ${inspect(expected.value)}`)
  }))
})

t.test('objects are refused exactly when a key repeats (as unescaped), is __proto__, or is a constructor holding a prototype', async (t) => {
  await holds(t, fc.property(members, (object) => {
    const text = render(object)
    const mine = agreesWithJsonParse(Buffer.from(text))
    assert.equal('error' in mine, mustRefuse(object), `${text}: ${'error' in mine ? mine.error.message : 'accepted'}`)
  }))
})

// --- Examples, through HTTP where a client sees them --------------------------

t.test('a key given twice is refused at any depth, also when escaped differently or with the same value', async (t) => {
  const app = await testApp(t)
  t.equal(assertError(t, await postPlant(app, '{"id":1,"id":2,"name":"a"}'), 400),
    'the body is not valid JSON: duplicate key "id" at position 9')
  t.match(assertError(t, await postPlant(app, '{"id":1,"name":"a","x":{"y":{"z":{"k":1,"k":2}}}}'), 400),
    /not valid JSON: duplicate key "k" at position 41/, 'in an object at depth 3')
  t.match(assertError(t, await postPlant(app, '{"id":1,"name":"a","i\\u0064":2}'), 400), /duplicate key "id"/, 'escaped')
  t.match(assertError(t, await postPlant(app, '{"id":1,"name":"a","x":[{},{"k":1,"k":2}]}'), 400), /duplicate key "k"/, 'in an array')
  t.equal(assertError(t, await postPlant(app, '{"id":1,"name":"a","name":"a"}'), 400),
    'the body is not valid JSON: a key is given twice in one object', 'with the same value')
  t.match(assertError(t, await postPlant(app, '{"id":1,"name":"a","x":[{"k":[1,{}],"k":[1,{}]}]}'), 400), /a key is given twice/)
  const odd = '"a\\"\\\\\\u0001\\u202e🌿é"'
  t.equal(assertError(t, await postPlant(app, `{${odd}:1,${odd}:2}`), 400),
    'the body is not valid JSON: duplicate key "a\\"\\\\\\u0001\\u202e\\ud83c\\udf3f\\u00e9" at position 27',
    'a key is echoed as printable ASCII only')
  const distinct = await postPlant(app, '{"id":1,"name":"a","Id":2,"toString":3,"constructor":{"x":1},"prototype":{},"x":{"id":2},"y":"a:b","z:":1}')
  t.equal(distinct.statusCode, 200, 'keys that only look alike, inherited names, and colons in strings are distinct')
})

t.test('a number as a key is refused, not read as a string', async (t) => {
  const app = await testApp(t)
  t.match(assertError(t, await postPlant(app, '{"id":1,"name":"a",12345678901234567:0}'), 400), /^the body is not valid JSON: .* at position 19$/)
})

t.test('nesting is refused once too deep for the stack, never a crash', async (t) => {
  const read = (text: string): unknown => parseJsonBody(Buffer.from(text))
  t.same(read('['.repeat(1000) + ']'.repeat(1000)), JSON.parse('['.repeat(1000) + ']'.repeat(1000)), '1000 levels are read')
  for (const text of ['['.repeat(200_000), '{"a":'.repeat(40_000), '['.repeat(200_000) + ']'.repeat(200_000)]) {
    t.throws(() => read(text), { message: 'the body is not valid JSON: it is nested too deeply' }, `${text.slice(0, 10)}…`)
  }
  const full = BODY_LIMIT / 2
  const deepest = await postPlant(await testApp(t), `{"id":1,"name":"a","x":${'['.repeat(full - 20)}${']'.repeat(full - 20)}}`)
  t.ok(deepest.statusCode === 200 || /nested too deeply/.test(assertError(t, deepest, 400)), 'as deep as BODY_LIMIT allows: read or refused')
})

t.test('__proto__ and constructor.prototype are refused at any depth', async (t) => {
  const app = await testApp(t)
  for (const body of [
    '{"id":1,"name":"a","__proto__":{"admin":true}}',
    '{"id":1,"name":"a","x":[{"__proto__":1}]}',
    '{"id":1,"name":"a","\\u005f_proto__":{}}',
    '{"id":1,"name":"a","x":{"constructor":{"prototype":{"admin":true}}}}',
    '{"id":1,"name":"a","constructor":{"x":1,"prototype":null}}'
  ]) {
    t.match(assertError(t, await postPlant(app, body), 400), /not valid JSON: forbidden prototype property/, body)
  }
  for (const body of ['{"constructor":1}', '{"constructor":[{"prototype":1}]}', '{"constructor":{"prototypes":1}}', '{"prototype":{}}']) {
    t.ok(parseJsonBody(Buffer.from(body)), `${body} is accepted`)
  }
  const value = parseJsonBody(Buffer.from('{"toString":1,"constructor":2}')) as Record<string, unknown>
  t.equal(Object.getPrototypeOf(value), Object.prototype, 'a plain object')
  t.ok(Object.hasOwn(value, 'toString') && Object.hasOwn(value, 'constructor'), 'inherited names become own keys')
})

t.test('strings: escapes decoded, lone surrogates and raw control characters refused', async (t) => {
  const read = (text: string): unknown => parseJsonBody(Buffer.from(text))
  t.equal(read('"\\ud83c\\udf3f \\uD83C\\uDF3F 🌿 \\u00e9\\"\\\\\\/\\b\\f\\n\\r\\t"'), '🌿 🌿 🌿 é"\\/\b\f\n\r\t')
  t.equal(read(`"${'\\u0041'.repeat(2000)}"`), 'A'.repeat(2000))
  t.same(read('{"\\u0061":"\\n"}'), { a: '\n' }, 'in keys too')
  for (const text of ['"\\ud800"', '"\\udc00"', '"\\ud800\\u0041"', '"\\ud800x"', '"\\udc00\\ud800"', '"\\ud800\\ud800"', '["\\uDFFF"]']) {
    t.throws(() => read(text), { message: 'the body is not valid JSON: a string holds a lone UTF-16 surrogate; send well-formed Unicode' }, text)
  }
  t.throws(() => read('{"\\udbff":1}'), { message: 'the body is not valid JSON: a key holds a lone UTF-16 surrogate; send well-formed Unicode' })
  t.throws(() => read('"a\u0001"'), { message: "the body is not valid JSON: Invalid character '\\u0001' at position 2" })
  t.throws(() => read('"a\nb"'), /Invalid character '\\u000a'/)
  t.throws(() => read('"\\x"'), { message: "the body is not valid JSON: Invalid escape character '\\x' at position 1" })
  t.throws(() => read('"\\u12"'), /Invalid unicode character '\\u12"' at position 1/)
  t.throws(() => read('"abc'), { message: 'the body is not valid JSON: End of string \'"\' expected but reached end of input at position 4' })
})

t.test('a string value does not keep the body it came from in memory', async (t) => {
  // A plant's name outlives its request: it must not keep its whole body alive.
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const kept: unknown[] = []
  gc()
  const before = process.memoryUsage().heapUsed
  for (let i = 0; i < 30; i++) {
    const { name, tag } = parseJsonBody(Buffer.from(
      `{"name":"a name long enough ${i}","tag":"an\\tescaped tag ${i}","pad":"${'x'.repeat(1024 * 1024)}"}`
    )) as { name: string, tag: string }
    kept.push(name, tag)
  }
  gc()
  const grown = process.memoryUsage().heapUsed - before
  t.ok(grown < 10 * 1024 * 1024, `the heap grew by ${(grown / 1024 / 1024).toFixed(1)} MiB keeping ${kept.length} short strings`)
})

t.test('exact numbers: integers as denoted, fractions a double would round to an integer refused', async (t) => {
  const read = (text: string): unknown => parseJsonBody(Buffer.from(text))
  const cases: Array<[string, number | bigint]> = [
    ['1e3', 1000], ['5.0', 5], ['1.5e1', 15], ['1E+2', 100], ['0.5', 0.5], ['-0', -0], ['-0.0', -0], ['0e10', 0],
    ['1e400', Infinity], ['-1e400', -Infinity], ['1e20', 1e20], ['9007199254740991', 9007199254740991],
    ['9007199254740992', 9007199254740992n], ['9007199254740993', 9007199254740993n], ['-9007199254740993', -9007199254740993n],
    ['9.007199254740993e15', 9007199254740993n], ['9007199254740993.0', 9007199254740993n], ['900719925474099300e-2', 9007199254740993n],
    ['9223372036854775807', 9223372036854775807n], ['12345678901234567890.0', 12345678901234567890n],
    ['123456789012345678901', Number('123456789012345678901')], ['-1' + '0'.repeat(400), -Infinity]
  ]
  for (const [text, value] of cases) t.ok(Object.is(read(text), value), `${text} is ${inspect(value)}`)
  t.throws(() => read('4503599627370496.5'),
    { message: 'the body is not valid JSON: the number 4503599627370496.5 is not an integer, but would be read as 4503599627370496' })
  t.throws(() => read('1.00000000000000000001'), /the number 1\.00000000000000000001 is not an integer, but would be read as 1$/)
  t.throws(() => read('1e-400'), /the number 1e-400 is not an integer, but would be read as 0$/)
})

t.test('only RFC 8259 JSON is accepted', async (t) => {
  const read = (text: string): unknown => parseJsonBody(Buffer.from(text))
  for (const text of ['', ' ', ' \t\n\r ']) t.equal(read(text), undefined, `${inspect(text)} is no body`)
  const refused = [
    '\ufeff{}', '\f{}', '\u00a0{}', '{}\u000b', '[1,]', '{"a":1,}', '[1 2]', '{"a":1 "b":2}', '{"a" 1}', '{"a"}', '{"a":}', '[,]', '{,}',
    '// c\n{}', '{} /* c */', "{'a':1}", 'NaN', 'Infinity', '-Infinity', 'True', 'nul', 'truex', '01', '-01', '+1', '.5', '1.', '1.e5',
    '1e', '1e+', '--1', '0x10', '1 2', '{}{}', '"a" "b"', '{"id":1,', '[', '{"id":1,x}', '🌿'
  ]
  for (const text of refused) {
    const result = outcome(() => read(text))
    t.ok('error' in result && result.error instanceof InvalidJson, `${inspect(text)}: ${'error' in result ? result.error.message : 'accepted'}`)
  }
  t.throws(() => read('\ufeff{}'), { message: "the body is not valid JSON: JSON value expected but got '\\ufeff' at position 0" }, 'a BOM')
  t.throws(() => read('{"id":1,'), { message: 'the body is not valid JSON: Quoted object key expected but reached end of input at position 8' })
})

t.test('error messages stay short whatever the body, through HTTP', async (t) => {
  const app = await testApp(t)
  const half = 'k'.repeat(BODY_LIMIT / 2 - 20)
  const bodies: Array<[string, string | Buffer, RegExp]> = [
    ['BODY_LIMIT of x', 'x'.repeat(BODY_LIMIT), /JSON value expected but got 'x' at position 0/],
    ['a key that never ends', '{"' + 'k'.repeat(BODY_LIMIT - 2), /reached end of input at position 16384/],
    ['a long key twice', `{"${half}":1,"${half}":2}`, /duplicate key "k{39}… at position \d+$/],
    ['a number that goes wrong after thousands of digits', '[' + '1'.repeat(BODY_LIMIT - 3) + '.x', /Invalid number '1{40}…', expecting a digit/],
    ['a control character after a long text', '"' + 'a'.repeat(BODY_LIMIT - 3) + '\u0001"', /Invalid character '\\u0001'/],
    ['a lone surrogate after many escapes', '"' + '\\u0000'.repeat(2700) + '\\ud800"', /lone UTF-16 surrogate/],
    ['an invalid escape after many escapes', '"' + '\\"'.repeat(BODY_LIMIT / 2 - 2) + '\\q"', /Invalid escape character '\\q' at position \d+/],
    ['bytes that are not UTF-8', Buffer.alloc(BODY_LIMIT, 0xff), /not valid UTF-8/],
    ['JSON-ish garbage', fc.sample(fc.string({ unit: jsonishCharacter, minLength: BODY_LIMIT / 4, maxLength: BODY_LIMIT / 4 }), { seed, numRuns: 1 })[0], /not valid JSON/]
  ]
  for (const [what, body, detail] of bodies) {
    const message = assertError(t, await postPlant(app, body), 400, what)
    t.match(message, detail, what)
    t.ok(message.length <= MAX_MESSAGE_LENGTH, `${what}: ${message.length} characters`)
  }
})
