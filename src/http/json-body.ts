import { InvalidJson } from './errors.ts'
import { readNumber } from './json-number.ts'
import { readString } from './json-string.ts'
import { echo, unexpected } from './json-text.ts'

// Parses request bodies exactly and in time linear in their size. JSON.parse reads
// every number as a double, which rounds integers beyond 2^53 (9007199254740993
// becomes ...992) and can turn a fraction into an integer (4503599627370496.5 becomes
// ...496); it also keeps the last of duplicate keys, so a body could say two things
// at once. This parser is one pass over the text that builds the value as it goes:
// integers a double cannot hold become bigints, a fraction that would be read as an
// integer is refused, and duplicate keys, lone surrogates, __proto__ and
// constructor.prototype keys are refused rather than silently resolved. The
// limits below, and MAX_NUMBER_LENGTH, bound the work on anything an attacker
// controls, so no body within BODY_LIMIT can hold the event loop. This file holds
// the structure (values, objects, arrays); json-string.ts and json-number.ts read
// the leaves, json-text.ts holds what they share.

// Kept with the number rules it bounds, and exported here with the other limits.
export { MAX_NUMBER_LENGTH } from './json-number.ts'
/** Arrays and objects nested deeper than this are refused before the parser recurses further. */
export const MAX_NESTING_DEPTH = 64
/**
 * A body holding more values than this (the body itself, every array item, every
 * object member) is refused at the first one too many. Building an object of a
 * hundred thousand keys, which fit in 1 MiB, costs V8 about 50 ms (as much with
 * JSON.parse), and ten thousand long ones still held /health past 100 ms on a busy
 * machine; a NewPlant holds four values.
 */
export const MAX_VALUES = 1000

// ignoreBOM keeps a byte order mark in the text, where it is refused like any other
// stray character: RFC 8259 forbids it, and stripping it would accept a body JSON.parse refuses.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

// The character codes this file compares against. Each file of the parser declares
// its own: V8 builds a module's own constants into the code it compiles, and the same
// codes imported from one shared file measured 10% slower on a typical body.
const TAB = 0x09
const LF = 0x0a
const CR = 0x0d
const SPACE = 0x20
const QUOTE = 0x22
const COMMA = 0x2c
const MINUS = 0x2d
const ZERO = 0x30
const NINE = 0x39
const COLON = 0x3a
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const LOWER_F = 0x66
const LOWER_N = 0x6e
const LOWER_T = 0x74
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d

export function parseJsonBody (raw: Buffer): unknown {
  // No body at all: the route's schema decides whether one was required.
  if (raw.length === 0) return undefined
  let text: string
  try {
    text = utf8.decode(raw)
  } catch {
    throw new InvalidJson('it is not valid UTF-8')
  }
  return new Parser(text).document()
}

// The Cursor the string and number scanners read from and move on.
class Parser {
  readonly text: string
  pos = 0
  private depth = 0
  private values = 0

  constructor (text: string) {
    this.text = text
  }

  document (): unknown {
    this.skipWhitespace()
    // Only whitespace: as good as no body, for the schema to judge.
    if (this.pos === this.text.length) return undefined
    const value = this.value()
    this.skipWhitespace()
    if (this.pos < this.text.length) throw unexpected(this.text, this.pos, 'the end of the body')
    return value
  }

  /** The value at pos, which is past any whitespace. */
  private value (): unknown {
    if (++this.values > MAX_VALUES) throw new InvalidJson(`more than ${MAX_VALUES} values at position ${this.pos}`)
    switch (this.text.charCodeAt(this.pos)) {
      case QUOTE: return readString(this, true)
      case OPEN_BRACE: return this.object()
      case OPEN_BRACKET: return this.array()
      case LOWER_T: return this.word('true', true)
      case LOWER_F: return this.word('false', false)
      case LOWER_N: return this.word('null', null)
      case MINUS: case ZERO: case ZERO + 1: case ZERO + 2: case ZERO + 3: case ZERO + 4:
      case ZERO + 5: case ZERO + 6: case ZERO + 7: case ZERO + 8: case NINE:
        return readNumber(this)
      default: throw unexpected(this.text, this.pos, 'a value')
    }
  }

  private object (): Record<string, unknown> {
    this.enter()
    const text = this.text
    const object: Record<string, unknown> = {}
    this.skipWhitespace()
    if (text.charCodeAt(this.pos) === CLOSE_BRACE) return this.leave(object)
    for (;;) {
      if (text.charCodeAt(this.pos) !== QUOTE) throw unexpected(text, this.pos, 'a string key')
      const at = this.pos
      const key = readString(this, false)
      // Assigning __proto__ would replace the object's prototype rather than add a key.
      if (key === '__proto__') throw new InvalidJson(`forbidden prototype property "__proto__" at position ${at}`)
      // Two values for one key: code reading the first and code reading the last
      // would see different bodies, so neither is chosen. No JSON value is undefined,
      // so only an inherited name (toString…) needs the second look; reading first
      // was also the fastest check measured on objects of many keys.
      if (object[key] !== undefined && Object.hasOwn(object, key)) throw new InvalidJson(`duplicate key ${echo(key)} at position ${at}`)
      this.skipWhitespace()
      if (text.charCodeAt(this.pos) !== COLON) throw unexpected(text, this.pos, '":"')
      this.pos++
      this.skipWhitespace()
      const value = this.value()
      // What secure-json-parse refused too: a merge into a plain object could reach a prototype through it.
      if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) {
        throw new InvalidJson(`forbidden prototype property: "constructor" holding "prototype" at position ${at}`)
      }
      object[key] = value
      this.skipWhitespace()
      const c = text.charCodeAt(this.pos)
      if (c === CLOSE_BRACE) return this.leave(object)
      if (c !== COMMA) throw unexpected(text, this.pos, '"," or "}"')
      this.pos++
      this.skipWhitespace()
    }
  }

  private array (): unknown[] {
    this.enter()
    const text = this.text
    const array: unknown[] = []
    this.skipWhitespace()
    if (text.charCodeAt(this.pos) === CLOSE_BRACKET) return this.leave(array)
    for (;;) {
      array.push(this.value())
      this.skipWhitespace()
      const c = text.charCodeAt(this.pos)
      if (c === CLOSE_BRACKET) return this.leave(array)
      if (c !== COMMA) throw unexpected(text, this.pos, '"," or "]"')
      this.pos++
      this.skipWhitespace()
    }
  }

  // The depth is checked before recursing, so no body can exhaust the stack.
  private enter (): void {
    if (++this.depth > MAX_NESTING_DEPTH) {
      throw new InvalidJson(`nesting deeper than ${MAX_NESTING_DEPTH} levels at position ${this.pos}`)
    }
    this.pos++
  }

  private leave<T> (value: T): T {
    this.depth--
    this.pos++
    return value
  }

  /** The literal at pos, whose first character the caller has seen. */
  private word<T> (word: string, value: T): T {
    for (let k = 1; k < word.length; k++) {
      if (this.text.charCodeAt(this.pos + k) !== word.charCodeAt(k)) throw unexpected(this.text, this.pos + k, word)
    }
    this.pos += word.length
    return value
  }

  private skipWhitespace (): void {
    const text = this.text
    let i = this.pos
    for (;;) {
      const c = text.charCodeAt(i)
      if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break
      i++
    }
    this.pos = i
  }
}
