import fc from 'fast-check'
import { INT64_MAX, INT64_MIN } from './json-reference.ts'

// Generators of hostile text and request bodies for the HTTP fuzz test: any Unicode, lone
// surrogates, long texts, JSON number edges, near-miss keys, and JSON with its bytes edited.

// ---------------------------------------------------------------------------------
// Text

/** Characters an HTTP header value can carry: visible ASCII, space, tab, obs-text. */
const headerChar = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constant(0x09) },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) }
).map((c) => String.fromCharCode(c))
export const headerText = (maxLength = 40) => fc.string({ unit: headerChar, maxLength })

/** Repeats a short unit: long texts that shrink to short ones. */
export const repeated = (unit: fc.Arbitrary<string>, min: number, max: number) =>
  fc.tuple(unit, fc.integer({ min, max })).map(([text, times]) => text.repeat(times))

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c))
const codePoint = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })

/** Names and tags: any Unicode, control characters, lone surrogates, empty, and long ones around and past the limits. */
const unicodeText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.string({ unit: fc.oneof(loneSurrogate, codePoint), maxLength: 6 }) },
  // around the tag (100) and name (1000) limits, counted in code points
  { weight: 1, arbitrary: repeated(codePoint, 95, 105) },
  { weight: 1, arbitrary: repeated(codePoint, 995, 1005) },
  // long: up to and past the 1 MiB body limit
  { weight: 1, arbitrary: repeated(fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }), 1000, 400_000) }
)

/** A JSON string literal: as JSON.stringify writes it, or with every UTF-16 unit as a \u escape. */
const jsonString = (text: fc.Arbitrary<string>) =>
  fc.tuple(text, fc.integer({ min: 0, max: 4 })).map(([value, how]) => how === 0 ? escapeAll(value) : JSON.stringify(value))

function escapeAll (text: string): string {
  let out = '"'
  for (let i = 0; i < text.length; i++) out += '\\u' + text.charCodeAt(i).toString(16).padStart(4, '0')
  return out + '"'
}

const jsonText = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value))

// ---------------------------------------------------------------------------------
// Bodies

/** JSON text for an id: integers, int64 edges, big integers as raw text, doubles, non-numbers. */
const idText = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -50, max: 300 }).map(String) },
  { weight: 2, arbitrary: fc.bigInt({ min: INT64_MIN - 5n, max: INT64_MAX + 5n }).map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('9223372036854775807', '9223372036854775808', '-9223372036854775808',
      '-9223372036854775809', '18446744073709551616', '9007199254740992', '9007199254740993',
      '9007199254740993.0', '4503599627370496.5', '1e3', '1E3', '1e+3', '5.0', '5.00000000000000000001',
      '1.5', '-0', '0.0', '0e0', '1e-1', '10e-1', '1e400', '-1e400', '1e-400', '9.223372036854775807e18',
      '9.223372036854775808e18', '100000000000000000000000000', `1${'0'.repeat(400)}`, '01', '+1', '.5',
      '1.', '0x10', 'NaN', 'Infinity', '-')
  },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map(String) },
  { weight: 1, arbitrary: jsonString(fc.oneof(fc.integer().map(String), fc.string({ maxLength: 5 }))) },
  { weight: 1, arbitrary: fc.constantFrom('null', 'true', 'false', '{}', '[]', '[1]', '{"$numberLong":"1"}') }
)

/** JSON text for a name or tag: mostly strings, sometimes anything else. */
const textValue = fc.oneof(
  { weight: 8, arbitrary: jsonString(unicodeText) },
  { weight: 1, arbitrary: fc.constantFrom('null', 'true', '0', '123', '[]', '{}', '["a"]', '{"en":"x"}', '1e400') },
  { weight: 1, arbitrary: jsonText }
)

/** A key as JSON text, written plainly or as escapes ("n\u0061me" is "name"). */
const jsonKey = (key: string) => fc.oneof({ weight: 6, arbitrary: fc.constant(JSON.stringify(key)) }, { weight: 1, arbitrary: fc.constant(escapeAll(key)) })
const member = (key: string, value: fc.Arbitrary<string>) => fc.tuple(jsonKey(key), value).map(([k, v]) => `${k}:${v}`)

/** Members a client may add: unknown keys, prototype keys, near-miss keys, and duplicates of the real ones. */
const extraMember = fc.oneof(
  member('id', idText),
  member('name', textValue),
  member('tag', textValue),
  fc.tuple(jsonString(fc.string({ unit: 'binary', maxLength: 8 })), jsonText).map(([k, v]) => `${k}:${v}`),
  fc.constantFrom('"__proto__":{"x":1}', '"__proto__":null', '"constructor":{"prototype":{"x":1}}',
    '"constructor":1', '"prototype":1', '"ID":1', '"Name":"x"', '"id ":1', '"":0', '"\\u005f_proto__":{}')
)

/** An object shaped like a NewPlant with arbitrary fields, as raw JSON text (duplicate keys included). */
const plantText = fc.record({
  id: fc.option(member('id', idText), { freq: 10 }),
  name: fc.option(member('name', textValue), { freq: 10 }),
  tag: fc.option(member('tag', textValue), { freq: 2 }),
  extra: fc.array(fc.tuple(extraMember, fc.nat()), { maxLength: 3 }),
  space: fc.constantFrom('', '', '', ' ', '\n', '\t\r\n ')
}).map(({ id, name, tag, extra, space }) => {
  const members = [id, name, tag].filter((m) => m !== null)
  for (const [m, at] of extra) members.splice(at % (members.length + 1), 0, m)
  return `{${space}${members.join(`,${space}`)}${space}}`
})

// Names and tags within the limits, for plants that are created.
const plantName = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: repeated(codePoint, 95, 100) },
  { weight: 1, arbitrary: repeated(codePoint, 990, 1000) }
)
const plantTag = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: repeated(codePoint, 90, 100) }
)
const unknownKey = fc.string({ unit: 'binary', maxLength: 8 }).filter((key) => !['id', 'name', 'tag', '__proto__', 'constructor'].includes(key))
/** A well-formed NewPlant as JSON text, in its many spellings: most of these are created (or conflict). */
export const wellFormedPlant = fc.record({
  id: member('id', fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: -50, max: 300 }).map(String) },
    { weight: 2, arbitrary: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }).map(String) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('9223372036854775807', '-9223372036854775808', '9007199254740993', '1e3', '5.0', '-0',
        '0e0', '10e-1', '9.223372036854775807e18', '9007199254740993.0', '-9.223372036854775808E+18')
    }
  )),
  name: member('name', jsonString(plantName)),
  tag: fc.option(member('tag', jsonString(plantTag)), { freq: 2 }),
  extra: fc.array(fc.tuple(fc.tuple(jsonString(unknownKey), jsonText).map(([k, v]) => `${k}:${v}`), fc.nat()), { maxLength: 2 }),
  space: fc.constantFrom('', '', '', ' ', '\n', '\t\r\n ')
}).map(({ id, name, tag, extra, space }) => {
  const members = tag === null ? [id, name] : [id, name, tag]
  for (const [m, at] of extra) members.splice(at % (members.length + 1), 0, m)
  return `{${space}${members.join(`,${space}`)}${space}}`
})

// Byte sequences that matter to a JSON or UTF-8 decoder, as latin1 strings.
const TOKENS = ['"', '{', '}', '[', ']', ',', ':', '\\', '\\u', '\\ud800', '\\udc00', '\\ud83c\\udf3f', '0', '-',
  'e', '.', '\x00', ' ', '\x7f', '\xff', '\xc3', '\xed\xa0\x80', '\xf4\x90\x80\x80', '\xc0\xaf', '\xef\xbb\xbf',
  '9999999999999999999', '1e999', 'null', '"__proto__":', '/*', '\xe2\x80\xa8']

const edit = fc.record({
  kind: fc.constantFrom('insert', 'delete', 'replace', 'truncate'),
  at: fc.nat(),
  bytes: fc.oneof(
    fc.uint8Array({ minLength: 1, maxLength: 3 }).map((b) => Buffer.from(b)),
    fc.constantFrom(...TOKENS).map((s) => Buffer.from(s, 'latin1'))
  )
})

function applyEdit (text: Buffer, { kind, at, bytes }: { kind: string, at: number, bytes: Buffer }): Buffer {
  const i = at % (text.length + 1)
  switch (kind) {
    case 'insert': return Buffer.concat([text.subarray(0, i), bytes, text.subarray(i)])
    case 'delete': return Buffer.concat([text.subarray(0, i), text.subarray(i + bytes.length)])
    case 'replace': return Buffer.concat([text.subarray(0, i), bytes, text.subarray(i + bytes.length)])
    default: return text.subarray(0, i)
  }
}

/** Valid JSON text with random byte insertions, deletions, replacements and truncations. */
const nearJson = fc.tuple(fc.oneof(plantText, jsonText), fc.array(edit, { minLength: 1, maxLength: 4 }))
  .map(([text, edits]) => edits.reduce(applyEdit, Buffer.from(text)))

export const body: fc.Arbitrary<string | Buffer> = fc.oneof(
  { weight: 3, arbitrary: wellFormedPlant },
  { weight: 6, arbitrary: plantText },
  { weight: 2, arbitrary: fc.jsonValue({ stringUnit: 'binary' }).map((value) => JSON.stringify(value)) },
  { weight: 4, arbitrary: nearJson },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\r\n', 'null', '{}', '[]', '""', '0', '\ufeff{}') }
)
