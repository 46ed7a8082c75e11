import fc from 'fast-check'
import { wellFormed } from './json-body-reference.ts'

// Generated bodies for the JSON body parser's properties (test/json-body.test.ts): JSON,
// near-JSON, number literals, strings, objects with repeated or special keys, stray bytes.

/** Keys the parser refuses on purpose, wherever they are. */
function refusedOnPurpose (value: fc.JsonValue): boolean {
  if (Array.isArray(value)) return value.some(refusedOnPurpose)
  if (value === null || typeof value !== 'object') return false
  return Object.entries(value).some(([key, inner]) =>
    key === '__proto__' ||
    (key === 'constructor' && inner !== null && typeof inner === 'object' && Object.hasOwn(inner, 'prototype')) ||
    refusedOnPurpose(inner as fc.JsonValue))
}

// JSON.stringify never repeats a key.
export const jsonValue = fc.oneof(
  fc.jsonValue({ maxDepth: 5 }),
  fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }).filter(wellFormed)
).filter((value) => !refusedOnPurpose(value))

export const whitespace = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 3 })

/** JSON text of value with whitespace, taken in turn from spaces, around every token. */
export function spacedJson (value: fc.JsonValue, spaces: string[]): string {
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
export const jsonishCharacter = fc.oneof(
  { arbitrary: fc.constantFrom(...JSONISH), weight: 8 },
  { arbitrary: oddCharacter, weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), weight: 1 }
)

const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom('insert', 'delete', 'replace'), character: jsonishCharacter })

/** JSON text with a few single-character insertions, deletions or replacements. */
export const editedJson = fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.array(edit, { minLength: 1, maxLength: 3 }))
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
export const editedTokens = fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.array(tokenEdit, { minLength: 1, maxLength: 2 }))
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
export const numberBody = fc.tuple(numberLiteral, fc.constantFrom(...NUMBER_PLACES))

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
export const stringBody = fc.tuple(fc.array(stringPiece, { maxLength: 6 }), fc.constantFrom(...STRING_PLACES))
  .map(([pieces, place]) => place.replace('%', () => pieces.join('')))

// Objects drawn from a few keys, some the same once unescaped, some special to JavaScript.
export interface Members { members: Array<[string, Members | number]> }
const KEYS = ['a', 'b', '\\u0061', 'id', '0', '00', 'toString', 'hasOwnProperty', 'prototype', 'constructor', '__proto__', '__pro\\u0074o__']
export const members: fc.Arbitrary<Members> = fc.letrec<{ object: Members }>((tie) => ({
  object: fc.record({
    members: fc.array(fc.tuple(fc.constantFrom(...KEYS), fc.oneof({ depthSize: 'small' }, fc.nat(9), tie('object'))), { maxLength: 4 })
  })
})).object

export function render ({ members }: Members): string {
  return `{${members.map(([key, value]) => `"${key}":${typeof value === 'number' ? value : render(value)}`).join(',')}}`
}

/** Whether the parser must refuse the object: a key twice, a __proto__, a constructor holding a prototype. */
export function mustRefuse ({ members }: Members): boolean {
  const keys = members.map(([key]) => JSON.parse(`"${key}"`) as string)
  if (new Set(keys).size < keys.length || keys.includes('__proto__')) return true
  return members.some(([key, value], i) => typeof value !== 'number' &&
    (mustRefuse(value) || (keys[i] === 'constructor' && value.members.some(([inner]) => inner === 'prototype'))))
}

// Invalid UTF-8 and stray bytes, spliced into JSON text.
export const byteBody = fc.tuple(fc.jsonValue({ maxDepth: 2 }), fc.uint8Array({ minLength: 1, maxLength: 4 }), fc.nat())
  .map(([value, bytes, at]) => {
    const text = Buffer.from(JSON.stringify(value))
    const i = at % (text.length + 1)
    return Buffer.concat([text.subarray(0, i), bytes, text.subarray(i)])
  })
