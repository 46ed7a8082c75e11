import { isInteger, parse, splitNumber, type DuplicateKeyInfo } from 'lossless-json'
import { InvalidJson } from './errors.ts'

// lossless-json, not JSON.parse: that rounds int64 ids beyond 2^53 and keeps the last of two keys.

// ignoreBOM keeps a byte order mark in the text, where the parser refuses it as RFC 8259 does.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const JSON_WHITESPACE = /^[ \t\n\r]*$/
// A string, or a colon outside one: in valid JSON, each such colon is one object member.
const STRING_OR_COLON = /"(?:[^"\\]|\\.)*"|:/g
// More digits is far outside int64 (refused anyway), and BigInt's conversion is not linear.
const MAX_EXACT_DIGITS = 20
// What an error message echoes of the body is cut to this many characters.
const MAX_ECHO = 40

/** The body's value: undefined for none (the route's schema judges), else exactly what it says. */
export function parseJsonBody (raw: Buffer): unknown {
  if (raw.length === 0) return undefined
  let text: string
  try {
    text = utf8.decode(raw)
  } catch {
    throw new InvalidJson('it is not valid UTF-8')
  }
  if (JSON_WHITESPACE.test(text)) return undefined
  let keys = -1 // the reviver's first call is for the body itself, not a member
  let value: unknown
  try {
    value = parse(text, function (this: unknown, key: string, value: unknown) {
      if (!Array.isArray(this)) {
        keys++
        refuseKey(key, value)
      }
      if (typeof value === 'string' && !value.isWellFormed()) throw new InvalidJson('a string holds a lone UTF-16 surrogate; send well-formed Unicode')
      return value
    }, { parseNumber: exactNumber, onDuplicateKey })
  } catch (error) {
    if (error instanceof InvalidJson) throw error
    // A RangeError is the stack the nesting exhausted.
    throw new InvalidJson(error instanceof RangeError ? 'it is nested too deeply' : printable((error as Error).message))
  }
  // lossless-json keeps a key given twice with equal values: only the count of members tells.
  if (membersOf(text) !== keys) throw new InvalidJson('a key is given twice in one object')
  return value
}

/** A key given twice with different values: code reading the first and code reading the last would disagree. */
function onDuplicateKey ({ key, position }: DuplicateKeyInfo): never {
  throw new InvalidJson(`duplicate key ${quoted(key)} at position ${position}`)
}

function refuseKey (key: string, value: unknown): void {
  if (!key.isWellFormed()) throw new InvalidJson('a key holds a lone UTF-16 surrogate; send well-formed Unicode')
  // Either would let a merge into a plain object reach a prototype, as secure-json-parse refuses.
  if (key === '__proto__') throw new InvalidJson('forbidden prototype property "__proto__"')
  if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) {
    throw new InvalidJson('forbidden prototype property: "constructor" holding "prototype"')
  }
}

function membersOf (text: string): number {
  let count = 0
  for (const [match] of text.matchAll(STRING_OR_COLON)) if (match === ':') count++
  return count
}

/** A number literal's exact value (a bigint beyond 2^53); a fraction a double would round to an integer is refused. */
function exactNumber (literal: string): number | bigint {
  const double = Number(literal)
  if (Number.isSafeInteger(double) && isInteger(literal)) return double
  const { sign, digits, exponent } = splitNumber(literal)
  if (digits.length - 1 > exponent) {
    if (Number.isInteger(double)) throw new InvalidJson(`the number ${cut(literal)} is not an integer, but would be read as ${double}`)
    return double
  }
  if (Number.isSafeInteger(double) || exponent >= MAX_EXACT_DIGITS) return double
  return BigInt(sign + digits + '0'.repeat(exponent + 1 - digits.length))
}

/** The parser's message, shown as printable ASCII, what it echoes of the body cut short. */
function printable (message: string): string {
  return ascii(message).replace(/'([^']*)'/g, (_, echoed: string) => `'${cut(echoed)}'`)
}

function quoted (key: string): string {
  return cut(ascii(JSON.stringify(key)))
}

function ascii (text: string): string {
  return text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function cut (text: string): string {
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}…` : text
}
