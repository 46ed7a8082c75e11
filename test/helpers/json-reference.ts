// A reference JSON reader for the fuzz tests, independent of the service's: exact number
// literals, duplicate keys resolved as JSON.parse does (the last one wins), and the
// NewPlant a body denotes by the README's rules.

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

export class JsonNumber {
  readonly literal: string
  constructor (literal: string) { this.literal = literal }
}
type Json = null | boolean | string | JsonNumber | Json[] | Map<string, Json>

class NotJson extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true })
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y

/** The JSON value of these bytes, or undefined when they are not UTF-8 JSON text (a BOM is allowed). */
export function readJson (bytes: Buffer): Json | undefined {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return undefined
  }
  let i = 0
  const space = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++ }
  const expect = (c: string) => { if (text[i] !== c) throw new NotJson(); i++ }
  const string = (): string => {
    expect('"')
    let out = ''
    for (;;) {
      const c = text[i++]
      if (c === undefined || c < ' ') throw new NotJson()
      if (c === '"') return out
      if (c !== '\\') { out += c; continue }
      const e = text[i++]
      const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }[e ?? '']
      if (simple !== undefined) { out += simple; continue }
      if (e !== 'u' || !/^[0-9a-fA-F]{4}$/.test(text.slice(i, i + 4))) throw new NotJson()
      out += String.fromCharCode(parseInt(text.slice(i, i + 4), 16))
      i += 4
    }
  }
  const value = (): Json => {
    space()
    const c = text[i]
    let result: Json
    if (c === '{') {
      i++
      const object = new Map<string, Json>()
      space()
      if (text[i] === '}') i++
      else {
        for (;;) {
          space()
          const key = string()
          space()
          expect(':')
          object.set(key, value())
          space()
          if (text[i] === ',') { i++; continue }
          expect('}')
          break
        }
      }
      result = object
    } else if (c === '[') {
      i++
      const array: Json[] = []
      space()
      if (text[i] === ']') i++
      else {
        for (;;) {
          array.push(value())
          space()
          if (text[i] === ',') { i++; continue }
          expect(']')
          break
        }
      }
      result = array
    } else if (c === '"') {
      result = string()
    } else if (text.startsWith('true', i)) {
      i += 4; result = true
    } else if (text.startsWith('false', i)) {
      i += 5; result = false
    } else if (text.startsWith('null', i)) {
      i += 4; result = null
    } else {
      NUMBER.lastIndex = i
      const m = NUMBER.exec(text)
      if (m === null || m[0] === '' || m[0] === '-') throw new NotJson()
      i += m[0].length
      result = new JsonNumber(m[0])
    }
    space()
    return result
  }
  try {
    const result = value()
    if (i !== text.length) return undefined
    return result
  } catch (err) {
    if (err instanceof NotJson) return undefined
    throw err
  }
}

/** The int64 a number literal denotes exactly (1e3 and 5.0 do), or undefined. */
export function int64Of (literal: string): bigint | undefined {
  const [, sign, whole, fraction = '', exponent = '0'] = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal)!
  const digits = (whole + fraction).replace(/^0+/, '')
  if (digits === '') return 0n
  const significant = digits.replace(/0+$/, '')
  const scale = BigInt(exponent) - BigInt(fraction.length) + BigInt(digits.length - significant.length)
  if (scale < 0n || BigInt(significant.length) + scale > 20n) return undefined
  const value = BigInt(sign + significant + '0'.repeat(Number(scale)))
  return value >= INT64_MIN && value <= INT64_MAX ? value : undefined
}

interface SentPlant { id: bigint, name: string, tag?: string }

/** The NewPlant these bytes denote, by the README's rules, or undefined when they are not one. */
export function newPlantOf (bytes: Buffer): SentPlant | undefined {
  const value = readJson(bytes)
  if (!(value instanceof Map)) return undefined
  const id = value.get('id')
  const name = value.get('name')
  const tag = value.get('tag')
  if (!(id instanceof JsonNumber) || typeof name !== 'string' || !name.isWellFormed()) return undefined
  if (tag !== undefined && (typeof tag !== 'string' || !tag.isWellFormed())) return undefined
  const exact = int64Of(id.literal)
  if (exact === undefined) return undefined
  return { id: exact, name, ...(tag === undefined ? {} : { tag }) }
}
