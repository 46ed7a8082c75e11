import assert from 'node:assert/strict'
import { isUtf8 } from 'node:buffer'
import { inspect } from 'node:util'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { InvalidJson } from '../src/http/errors.ts'
import { parseJsonBody } from '../src/http/json-body.ts'
import { assertError, postPlant, testApp } from './helpers/app.ts'
import { fuzzSettings } from './helpers/fuzz.ts'

// The body parser against JSON.parse, the reference for what JSON is: on generated
// JSON, near-JSON and garbage, it never accepts what JSON.parse refuses, reads what
// both accept as JSON.parse does (exactly, where JSON.parse rounds), and refuses
// only what it refuses on purpose. Seeded: FUZZ_SEED=<n> replays a run, FUZZ_RUNS=<n>
// sets the runs per property.

const { seed, numRuns } = fuzzSettings(500)

const BODY_LIMIT = 16 * 1024 // the default
const MAX_MESSAGE_LENGTH = 200
// What the parser refuses although JSON.parse accepts it, each on purpose.
const STRICTER = new RegExp([
  'duplicate key', 'a key is given twice', 'forbidden prototype property', 'lone UTF-16 surrogate',
  'nested too deeply', 'is not an integer, but would be read as'
].join('|'))
const JSON_WHITESPACE_ONLY = /^[ \t\n\r]*$/

type Outcome = { value: unknown } | { error: Error }

function outcome (run: () => unknown): Outcome {
  try {
    return { value: run() }
  } catch (error) {
    return { error: error as Error }
  }
}

/** Throws unless error is the parser's refusal: an InvalidJson answering 400, with a short message. */
function assertRefusal (error: unknown, body: string | Buffer): asserts error is Error {
  const shown = inspect(body.toString().slice(0, 100))
  assert.ok(error instanceof InvalidJson, `not an InvalidJson for ${shown}: ${inspect(error)}`)
  assert.equal((error as { statusCode?: number }).statusCode, 400)
  assert.ok(error.message.length <= MAX_MESSAGE_LENGTH, `message of ${error.message.length} characters for ${shown}`)
}

/**
 * Where the parser's value differs from JSON.parse's, or undefined when they agree:
 * numbers compare exactly (-0 included), and a bigint must be an integer beyond 2^53
 * that JSON.parse rounds to the same double.
 */
function difference (mine: unknown, json: unknown, path = '$'): string | undefined {
  if (typeof json === 'number' && typeof mine === 'bigint') {
    if (Number(mine) !== json) return `${path}: ${mine}n is not ${json}`
    return Number.isSafeInteger(json) ? `${path}: ${mine}n should be a number` : undefined
  }
  if (Array.isArray(json)) {
    if (!Array.isArray(mine)) return `${path}: ${inspect(mine)} is not an array`
    if (mine.length !== json.length) return `${path}: ${mine.length} items, not ${json.length}`
    for (let i = 0; i < json.length; i++) {
      const found = difference(mine[i], json[i], `${path}[${i}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (json !== null && typeof json === 'object') {
    if (mine === null || typeof mine !== 'object' || Object.getPrototypeOf(mine) !== Object.prototype) {
      return `${path}: ${inspect(mine)} is not a plain object`
    }
    const keys = Object.keys(json)
    if (inspect(Object.keys(mine)) !== inspect(keys)) return `${path}: keys ${inspect(Object.keys(mine))}, not ${inspect(keys)}`
    for (const key of keys) {
      const found = difference((mine as Record<string, unknown>)[key], (json as Record<string, unknown>)[key], `${path}.${key}`)
      if (found !== undefined) return found
    }
    return undefined
  }
  return Object.is(mine, json) ? undefined : `${path}: ${inspect(mine)} is not ${inspect(json)}`
}

/** Everything the differential properties assert about one body; throws what is wrong. */
function agreesWithJsonParse (body: Buffer): Outcome {
  const mine = outcome(() => parseJsonBody(body))
  const shown = inspect(body.toString().slice(0, 200))
  if (!isUtf8(body)) {
    assert.ok('error' in mine, `accepted invalid UTF-8: ${shown}`)
    assertRefusal(mine.error, body)
    assert.match(mine.error.message, /not valid UTF-8/)
    return mine
  }
  const text = body.toString()
  if (JSON_WHITESPACE_ONLY.test(text)) {
    assert.ok('value' in mine && mine.value === undefined, `whitespace is read as no body: ${shown}`)
    return mine
  }
  const json = outcome(() => JSON.parse(text))
  if ('error' in mine) {
    assertRefusal(mine.error, body)
    if ('value' in json) assert.match(mine.error.message, STRICTER, `refused JSON that is only refused on purpose: ${shown}`)
    return mine
  }
  assert.ok('value' in json, `accepted what JSON.parse refuses: ${shown} read as ${inspect(mine.value)}`)
  const found = difference(mine.value, json.value)
  assert.equal(found, undefined, `read ${shown} unlike JSON.parse: ${found}`)
  assert.ok(wellFormed(mine.value as fc.JsonValue), `read ${shown} into a string with a lone surrogate`)
  return mine
}

/** Runs a property with the run's seed; a failure names the seed, the replay path and the counterexample. */
async function holds<Ts> (t: Test, property: fc.IProperty<Ts>): Promise<void> {
  try {
    fc.assert(property, { seed, numRuns })
    t.pass(`${numRuns} runs (FUZZ_SEED=${seed})`)
  } catch (error) {
    t.fail(`FUZZ_SEED=${seed} FUZZ_RUNS=${numRuns}: ${(error as Error).message}`)
  }
}

// --- Generators -------------------------------------------------------------

/** Keys the parser refuses on purpose, wherever they are. */
function refusedOnPurpose (value: fc.JsonValue): boolean {
  if (Array.isArray(value)) return value.some(refusedOnPurpose)
  if (value === null || typeof value !== 'object') return false
  return Object.entries(value).some(([key, inner]) =>
    key === '__proto__' ||
    (key === 'constructor' && inner !== null && typeof inner === 'object' && Object.hasOwn(inner, 'prototype')) ||
    refusedOnPurpose(inner as fc.JsonValue))
}

function wellFormed (value: fc.JsonValue): boolean {
  if (typeof value === 'string') return value.isWellFormed()
  if (Array.isArray(value)) return value.every(wellFormed)
  if (value === null || typeof value !== 'object') return true
  return Object.entries(value).every(([key, inner]) => key.isWellFormed() && wellFormed(inner as fc.JsonValue))
}

// JSON.stringify never repeats a key.
const jsonValue = fc.oneof(
  fc.jsonValue({ maxDepth: 5 }),
  fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }).filter(wellFormed)
).filter((value) => !refusedOnPurpose(value))

const whitespace = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 3 })

/** JSON text of value with whitespace, taken in turn from spaces, around every token. */
function spacedJson (value: fc.JsonValue, spaces: string[]): string {
  let next = 0
  const space = (): string => spaces[next++ % spaces.length]
  const write = (value: fc.JsonValue): string => {
    if (Array.isArray(value)) return `[${space()}${value.map(write).join(`${space()},${space()}`)}${space()}]`
    if (value === null || typeof value !== 'object') return JSON.stringify(value)
    const members = Object.entries(value).map(([key, inner]) => `${JSON.stringify(key)}${space()}:${space()}${write(inner as fc.JsonValue)}`)
    return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`
  }
  return space() + write(value) + space()
}

const JSONISH = [...'{}[]",:0123456789.eE+-tfnrul\\/ bdDFa', '\t', '\n', '\r']
const oddCharacter = fc.constantFrom('\u0000', '\u001f', '\u007f', '\u00a0', '\u000b', '\u000c', '\u2028', '\ufeff', 'é', '🌿', '\ud800', '\udc00')
const jsonishCharacter = fc.oneof(
  { arbitrary: fc.constantFrom(...JSONISH), weight: 8 },
  { arbitrary: oddCharacter, weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), weight: 1 }
)

const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom('insert', 'delete', 'replace'), character: jsonishCharacter })

/** JSON text with a few single-character insertions, deletions or replacements. */
const editedJson = fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.array(edit, { minLength: 1, maxLength: 3 }))
  .map(([value, edits]) => edits.reduce((text, { at, kind, character }) => {
    const i = at % (text.length + 1)
    const rest = kind === 'insert' ? text.slice(i) : text.slice(i + 1)
    return text.slice(0, i) + (kind === 'delete' ? '' : character) + rest
  }, JSON.stringify(value)))

/** The tokens of value's JSON text: what a grammar slip would be about. */
function tokens (value: fc.JsonValue): string[] {
  if (Array.isArray(value)) return ['[', ...value.flatMap((item, i) => [...(i > 0 ? [','] : []), ...tokens(item)]), ']']
  if (value === null || typeof value !== 'object') return [JSON.stringify(value)]
  return ['{', ...Object.entries(value).flatMap(([key, inner], i) =>
    [...(i > 0 ? [','] : []), JSON.stringify(key), ':', ...tokens(inner as fc.JsonValue)]), '}']
}

const TOKENS = ['[', ']', '{', '}', ',', ':', '"a"', '0', '-1.5e3', 'true', 'null', ' ', '"\\u0041"', '1']
const tokenEdit = fc.record({ at: fc.nat(), kind: fc.constantFrom('insert', 'delete', 'replace'), token: fc.constantFrom(...TOKENS) })

/** JSON text with a token or two inserted, deleted or replaced: trailing commas, missing colons… */
const editedTokens = fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.array(tokenEdit, { minLength: 1, maxLength: 2 }))
  .map(([value, edits]) => edits.reduce((list, { at, kind, token }) => {
    const i = at % (list.length + 1)
    return [...list.slice(0, i), ...(kind === 'delete' ? [] : [token]), ...list.slice(kind === 'insert' ? i : i + 1)]
  }, tokens(value)).join(''))

const digits = (maxLength: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength })
const zeros = fc.nat(70).map((n) => '0'.repeat(n))

// Literals valid and not, short and over the limit, many on the edges of what a double holds.
const numberLiteral = fc.tuple(
  fc.constantFrom('', '', '-', '+'),
  fc.oneof(digits(25), digits(70), digits(3).map((d) => '0' + d), zeros.map((z) => '1' + z), fc.constantFrom(
    '0', '4503599627370496', '9007199254740991', '9007199254740992', '9007199254740993',
    '9223372036854775807', '9223372036854775808', '18446744073709551616', '123456789012345678901'
  )),
  fc.option(fc.oneof(digits(25), zeros.map((z) => z + '1'), zeros, fc.constantFrom('5', '50'))),
  fc.option(fc.tuple(
    fc.constantFrom('e', 'E'),
    fc.constantFrom('', '+', '-'),
    fc.oneof(fc.integer({ min: 0, max: 30 }).map(String), digits(5), zeros.map((z) => z + '1'))
  ).map((parts) => parts.join('')))
).map(([sign, whole, fraction, exponent]) => sign + whole + (fraction === null ? '' : '.' + fraction) + (exponent ?? ''))

const NUMBER_PLACES = ['%', ' % ', '[%]', '[1,%]', '{"id":%,"name":"a"}']
const numberBody = fc.tuple(numberLiteral, fc.constantFrom(...NUMBER_PLACES))

const stringPiece = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 4 }),
  fc.constantFrom(
    '\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t', '\\u0000', '\\u00e9', '\\uD83C\\uDF3F', '\\udbff\\udfff',
    '\\ud800', '\\udc00', '\\ud800\\ud800', '\\ud7ff', '\\udbff', '\\udfff', '\\ue000', '\\x', '\\u12', '\\U0041', "\\'", '\\', '"', '\u0001', '\n'
  ),
  fc.integer({ min: 0, max: 0xffff }).map((unit) => '\\u' + unit.toString(16).padStart(4, '0')),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => '\\u' + unit.toString(16).toUpperCase()),
  // Two escapes on the edges of the surrogate ranges: pairs, and what only looks like one.
  fc.array(fc.constantFrom('d7ff', 'd800', 'dbff', 'dc00', 'dfff', 'e000', '0041'), { minLength: 2, maxLength: 2 })
    .map((units) => units.map((unit) => '\\u' + unit).join('')),
  // Long strings, escapes and pairs among them.
  fc.tuple(fc.constantFrom('a', 'é', '🌿', '\\n', '\\uD83C\\uDF3F'), fc.integer({ min: 2040, max: 4100 }))
    .map(([piece, count]) => piece.repeat(count))
)
const STRING_PLACES = ['"%"', '["%"]', '{"%":1}', '{"a":"%"}']
const stringBody = fc.tuple(fc.array(stringPiece, { maxLength: 6 }), fc.constantFrom(...STRING_PLACES))
  .map(([pieces, place]) => place.replace('%', () => pieces.join('')))

// Objects drawn from a few keys, some the same once unescaped, some special to JavaScript.
interface Members { members: Array<[string, Members | number]> }
const KEYS = ['a', 'b', '\\u0061', 'id', '0', '00', 'toString', 'hasOwnProperty', 'prototype', 'constructor', '__proto__', '__pro\\u0074o__']
const members: fc.Arbitrary<Members> = fc.letrec<{ object: Members }>((tie) => ({
  object: fc.record({
    members: fc.array(fc.tuple(fc.constantFrom(...KEYS), fc.oneof({ depthSize: 'small' }, fc.nat(9), tie('object'))), { maxLength: 4 })
  })
})).object

function render ({ members }: Members): string {
  return `{${members.map(([key, value]) => `"${key}":${typeof value === 'number' ? value : render(value)}`).join(',')}}`
}

/** Whether the parser must refuse the object: a key twice, a __proto__, a constructor holding a prototype. */
function mustRefuse ({ members }: Members): boolean {
  const keys = members.map(([key]) => JSON.parse(`"${key}"`) as string)
  if (new Set(keys).size < keys.length || keys.includes('__proto__')) return true
  return members.some(([key, value], i) => typeof value !== 'number' &&
    (mustRefuse(value) || (keys[i] === 'constructor' && value.members.some(([inner]) => inner === 'prototype'))))
}

// Invalid UTF-8 and stray bytes, spliced into JSON text.
const byteBody = fc.tuple(fc.jsonValue({ maxDepth: 2 }), fc.uint8Array({ minLength: 1, maxLength: 4 }), fc.nat())
  .map(([value, bytes, at]) => {
    const text = Buffer.from(JSON.stringify(value))
    const i = at % (text.length + 1)
    return Buffer.concat([text.subarray(0, i), bytes, text.subarray(i)])
  })

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

/**
 * What the parser must read a number literal as: its exact value, as a number when a
 * double holds it exactly, a bigint for an integer beyond 2^53 of at most 20 digits
 * (anything longer is outside int64 and stays a double); or a RegExp matching the
 * refusal; undefined for what does not start as a number. Reasoned on the literal's
 * digits with bigint arithmetic, not on doubles.
 */
function expectedNumber (literal: string): { value: number | bigint } | { refused: RegExp } | undefined {
  // Anything else is not read as a number at all; the differential check covers it.
  if (!/^[-\d]/.test(literal)) return undefined
  const m = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal)
  if (m === null) return { refused: /not valid JSON/ }
  const [, sign, whole, fraction, exponent] = m
  const double = Number(literal)
  let significand = BigInt(whole + (fraction ?? ''))
  if (significand === 0n) return { value: double }
  let scale = Number(exponent ?? 0) - (fraction ?? '').length
  while (significand % 10n === 0n) {
    significand /= 10n
    scale++
  }
  if (scale < 0) return Number.isInteger(double) ? { refused: /is not an integer, but would be read as/ } : { value: double }
  if (Number.isSafeInteger(double) || significand.toString().length + scale > 20) return { value: double }
  return { value: BigInt(sign + significand.toString() + '0'.repeat(scale)) }
}

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
