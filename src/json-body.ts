import { InvalidJson } from './http-errors.js'

// Parses request bodies exactly and in time linear in their size. JSON.parse reads
// every number as a double, which rounds integers beyond 2^53 (9007199254740993
// becomes ...992) and can turn a fraction into an integer (4503599627370496.5 becomes
// ...496); it also keeps the last of duplicate keys, so a body could say two things
// at once. This parser is one pass over the text that builds the value as it goes:
// integers a double cannot hold become bigints, a fraction that would be read as an
// integer is refused, and duplicate keys, lone surrogates, __proto__ and
// constructor.prototype keys are refused rather than silently resolved. The
// limits below bound the work on anything an attacker controls, so no body within
// BODY_LIMIT can hold the event loop.

/** A number literal longer than this is refused before anything converts it. */
export const MAX_NUMBER_LENGTH = 64
/** Arrays and objects nested deeper than this are refused before the parser recurses further. */
export const MAX_NESTING_DEPTH = 64
/**
 * A body holding more values than this (the body itself, every array item, every
 * object member) is refused at the first one too many. Building an object of a
 * hundred thousand keys, which fit in 1 MiB, costs V8 about 50 ms (as much with
 * JSON.parse); a NewPlant holds four values.
 */
export const MAX_VALUES = 10_000

// ignoreBOM keeps a byte order mark in the text, where it is refused like any other
// stray character: RFC 8259 forbids it, and stripping it would accept a body JSON.parse refuses.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

// Only ever run on a literal of at most MAX_NUMBER_LENGTH characters.
const NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
// An integer of at most 15 digits is below 2^53, so summing its digits as a double is exact.
const SAFE_DIGITS = 15
// An integer with more significant digits than this is far outside int64: its double
// is refused by the validator anyway, and it is never worth building as a bigint.
const MAX_EXACT_DIGITS = 20
// V8 shares the characters of a slice this long with the whole body rather than copying them.
const SHARED_SLICE_LENGTH = 13
// The code units of a string with escapes are gathered here, a chunk at a time:
// parsing is synchronous, so one buffer serves every body.
const UNITS = 4096
const units = new Uint16Array(UNITS)
// What each one-character escape stands for, by the character after the backslash.
const ESCAPES: Array<number | undefined> = []
for (const [escape, unit] of Object.entries({ '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' })) {
  ESCAPES[escape.charCodeAt(0)] = unit.charCodeAt(0)
}
// Echoed input is cut to this many characters, so an error message stays short whatever was sent.
const ECHO_LENGTH = 40

const TAB = 0x09
const LF = 0x0a
const CR = 0x0d
const SPACE = 0x20
const QUOTE = 0x22
const PLUS = 0x2b
const COMMA = 0x2c
const MINUS = 0x2d
const DOT = 0x2e
const ZERO = 0x30
const NINE = 0x39
const COLON = 0x3a
const UPPER_E = 0x45
const OPEN_BRACKET = 0x5b
const BACKSLASH = 0x5c
const CLOSE_BRACKET = 0x5d
const LOWER_E = 0x65
const LOWER_F = 0x66
const LOWER_N = 0x6e
const LOWER_T = 0x74
const LOWER_U = 0x75
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

class Parser {
  private readonly text: string
  private pos = 0
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
    if (this.pos < this.text.length) throw this.unexpected('the end of the body')
    return value
  }

  /** The value at pos, which is past any whitespace. */
  private value (): unknown {
    if (++this.values > MAX_VALUES) throw new InvalidJson(`more than ${MAX_VALUES} values at position ${this.pos}`)
    switch (this.text.charCodeAt(this.pos)) {
      case QUOTE: return this.string(true)
      case OPEN_BRACE: return this.object()
      case OPEN_BRACKET: return this.array()
      case LOWER_T: return this.word('true', true)
      case LOWER_F: return this.word('false', false)
      case LOWER_N: return this.word('null', null)
      case MINUS: case ZERO: case ZERO + 1: case ZERO + 2: case ZERO + 3: case ZERO + 4:
      case ZERO + 5: case ZERO + 6: case ZERO + 7: case ZERO + 8: case NINE:
        return this.number()
      default: throw this.unexpected('a value')
    }
  }

  private object (): Record<string, unknown> {
    this.enter()
    const text = this.text
    const object: Record<string, unknown> = {}
    this.skipWhitespace()
    if (text.charCodeAt(this.pos) === CLOSE_BRACE) return this.leave(object)
    for (;;) {
      if (text.charCodeAt(this.pos) !== QUOTE) throw this.unexpected('a string key')
      const at = this.pos
      const key = this.string(false)
      // Assigning __proto__ would replace the object's prototype rather than add a key.
      if (key === '__proto__') throw new InvalidJson(`forbidden prototype property "__proto__" at position ${at}`)
      // Two values for one key: code reading the first and code reading the last
      // would see different bodies, so neither is chosen. No JSON value is undefined,
      // so only an inherited name (toString…) needs the second look; reading first
      // was also the fastest check measured on objects of many keys.
      if (object[key] !== undefined && Object.hasOwn(object, key)) throw new InvalidJson(`duplicate key ${echo(key)} at position ${at}`)
      this.skipWhitespace()
      if (text.charCodeAt(this.pos) !== COLON) throw this.unexpected('":"')
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
      if (c !== COMMA) throw this.unexpected('"," or "}"')
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
      if (c !== COMMA) throw this.unexpected('"," or "]"')
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

  /**
   * The string starting at the quote at pos. Nearly every string has no escape and
   * is sliced whole; a value is then copied out of the body, while a key needs no
   * copy, as V8 makes its own copy of a property name.
   */
  private string (isValue: boolean): string {
    const text = this.text
    const start = this.pos + 1
    let i = start
    for (;;) {
      const c = text.charCodeAt(i)
      if (c > QUOTE && c !== BACKSLASH) {
        i++
      } else if (c === QUOTE) {
        this.pos = i + 1
        return isValue ? detach(text.slice(start, i)) : text.slice(start, i)
      } else if (c === BACKSLASH) {
        return this.escapedString(start)
      } else if (c >= SPACE) {
        i++ // the space and "!"
      } else {
        throw this.notInString(i)
      }
    }
  }

  /**
   * The string from start, which holds an escape. Its code units are gathered in a
   * buffer and turned into strings a chunk at a time: concatenating each escape onto
   * a string costs ten times as much, and a body can hold half a million escapes.
   */
  private escapedString (start: number): string {
    const text = this.text
    const chunks: string[] = []
    let n = 0
    let i = start
    for (;;) {
      // Room for the two units of a surrogate pair.
      if (n > UNITS - 2) {
        chunks.push(String.fromCharCode.apply(null, units.subarray(0, n) as unknown as number[]))
        n = 0
      }
      const c = text.charCodeAt(i)
      if (c > QUOTE && c !== BACKSLASH) {
        units[n++] = c
        i++
      } else if (c === QUOTE) {
        this.pos = i + 1
        chunks.push(String.fromCharCode.apply(null, units.subarray(0, n) as unknown as number[]))
        return chunks.length === 1 ? chunks[0] : chunks.join('')
      } else if (c === BACKSLASH) {
        const unit = ESCAPES[text.charCodeAt(i + 1)]
        if (unit !== undefined) {
          units[n++] = unit
          i += 2
        } else if (text.charCodeAt(i + 1) === LOWER_U) {
          n = this.unicodeEscape(i, n)
          i = this.pos
        } else if (i + 1 < text.length) {
          throw new InvalidJson(`invalid escape at position ${i}: "\\" followed by ${character(text, i + 1)}`)
        } else {
          this.pos = i + 1
          throw this.unexpected('an escape')
        }
      } else if (c >= SPACE) {
        units[n++] = c
        i++
      } else {
        throw this.notInString(i)
      }
    }
  }

  /** Writes the \u escape at i to units from n; returns the new n, pos moved past the escape. */
  private unicodeEscape (i: number, n: number): number {
    const text = this.text
    const unit = this.hex4(i)
    units[n] = unit
    this.pos = i + 6
    if (unit < 0xd800 || unit > 0xdfff) return n + 1
    // A surrogate is a character only as a high one escaped right before a low one;
    // alone it is text no UTF-8 can hold, which the store could not keep as sent.
    if (unit <= 0xdbff && text.charCodeAt(i + 6) === BACKSLASH && text.charCodeAt(i + 7) === LOWER_U) {
      const low = this.hex4(i + 6)
      if (low >= 0xdc00 && low <= 0xdfff) {
        units[n + 1] = low
        this.pos = i + 12
        return n + 2
      }
    }
    throw new InvalidJson(`lone UTF-16 surrogate ${text.slice(i, i + 6)} at position ${i}; send well-formed Unicode`)
  }

  /** Why the character at i cannot be in a string: a raw control character, or the end of the body. */
  private notInString (i: number): Error {
    if (i < this.text.length) {
      return new InvalidJson(`unescaped control character ${codePoint(this.text.charCodeAt(i))} in a string at position ${i}`)
    }
    this.pos = i
    return this.unexpected('the closing quote of a string')
  }

  /** The code unit of the \uXXXX escape at i. */
  private hex4 (i: number): number {
    const text = this.text
    const value = (hexDigit(text.charCodeAt(i + 2)) << 12) | (hexDigit(text.charCodeAt(i + 3)) << 8) |
      (hexDigit(text.charCodeAt(i + 4)) << 4) | hexDigit(text.charCodeAt(i + 5))
    // A digit that is not one is -1, which sets every bit.
    if (value < 0) throw new InvalidJson(`invalid escape at position ${i}: "\\u" must be followed by 4 hex digits`)
    return value
  }

  private number (): number | bigint {
    const text = this.text
    const start = this.pos
    // Reading stops one character past the limit: the work is bounded however long the literal.
    const stop = Math.min(text.length, start + MAX_NUMBER_LENGTH + 1)
    let i = start
    if (text.charCodeAt(i) === MINUS) i++
    const digits = i
    let value = 0
    for (; i < stop; i++) {
      const c = text.charCodeAt(i)
      if (c < ZERO || c > NINE) break
      value = value * 10 + (c - ZERO)
    }
    const integerEnd = i
    // Any character a number can hold belongs to this literal: after a number, JSON
    // allows none of them, so reading them here refuses nothing JSON allows.
    while (i < stop && isNumberCharacter(text.charCodeAt(i))) i++
    if (i - start > MAX_NUMBER_LENGTH) {
      throw new InvalidJson(`a number at position ${start} is longer than ${MAX_NUMBER_LENGTH} characters`)
    }
    this.pos = i
    const count = integerEnd - digits
    // A short integer, which is nearly every number a body holds, needs no conversion.
    if (i === integerEnd && count > 0 && count <= SAFE_DIGITS && (count === 1 || text.charCodeAt(digits) !== ZERO)) {
      return digits === start ? value : -value
    }
    return exactNumber(text.slice(start, i), start)
  }

  /** The literal at pos, whose first character the caller has seen. */
  private word<T> (word: string, value: T): T {
    for (let k = 1; k < word.length; k++) {
      if (this.text.charCodeAt(this.pos + k) !== word.charCodeAt(k)) {
        this.pos += k
        throw this.unexpected(word)
      }
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

  private unexpected (expected: string): Error {
    const at = this.pos
    if (at >= this.text.length) return new InvalidJson(`unexpected end at position ${at}, expected ${expected}`)
    return new InvalidJson(`unexpected character ${character(this.text, at)} at position ${at}, expected ${expected}`)
  }
}

/**
 * The exact value of a number literal that is not a short integer: a number when a
 * double holds it exactly, a bigint for an integer beyond 2^53, the double when it
 * is not an integer at all or has too many digits to be an int64. Refuses a fraction
 * that a double would round to an integer.
 */
function exactNumber (literal: string, at: number): number | bigint {
  const m = NUMBER.exec(literal)
  if (m === null) throw new InvalidJson(`invalid number "${cut(literal)}" at position ${at}`)
  const [, sign, whole, fraction = '', exponent] = m
  const double = Number(literal)
  if (fraction === '' && exponent === undefined) {
    return Number.isSafeInteger(double) ? double : BigInt(literal)
  }
  // The value is significand × 10^scale, the significand's leading and trailing zeros dropped.
  const digits = whole + fraction
  let first = 0
  while (first < digits.length && digits.charCodeAt(first) === ZERO) first++
  if (first === digits.length) return double // a zero, -0 included, as JSON.parse reads it
  let last = digits.length
  while (digits.charCodeAt(last - 1) === ZERO) last--
  const scale = Number(exponent ?? 0) - fraction.length + (digits.length - last)
  if (scale < 0) {
    if (Number.isInteger(double)) {
      throw new InvalidJson(`the number ${cut(literal)} is not an integer, but would be read as ${double}`)
    }
    return double
  }
  if (Number.isSafeInteger(double) || last - first + scale > MAX_EXACT_DIGITS) return double
  return BigInt(sign + digits.slice(first, last) + '0'.repeat(scale))
}

function isNumberCharacter (c: number): boolean {
  return (c >= ZERO && c <= NINE) || c === DOT || c === LOWER_E || c === UPPER_E || c === MINUS || c === PLUS
}

/** The value of a hex digit, -1 for anything else. */
function hexDigit (c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO
  const lower = c | 0x20
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1
}

/**
 * A string of its own. A string value may be kept long after the request (a plant's
 * name is), and a slice of the body would keep the whole body alive with it: V8 shares
 * the characters of a slice this long rather than copying them. Concatenating makes V8
 * copy them into a new string, of which the slice taken then holds only that copy.
 */
function detach (slice: string): string {
  return slice.length < SHARED_SLICE_LENGTH ? slice : (' ' + slice).slice(1)
}

/** One character of the input, for an error message: quoted if printable ASCII, else its code point. */
function character (text: string, at: number): string {
  const c = text.codePointAt(at) as number
  return c >= SPACE && c < 0x7f ? JSON.stringify(String.fromCharCode(c)) : codePoint(c)
}

function codePoint (c: number): string {
  return `U+${c.toString(16).toUpperCase().padStart(4, '0')}`
}

function cut (literal: string): string {
  return literal.length > ECHO_LENGTH ? literal.slice(0, ECHO_LENGTH) + '…' : literal
}

/**
 * A key for an error message: quoted, cut to ECHO_LENGTH characters, and only printable
 * ASCII shown as it is, so nothing invisible (controls, bidirectional overrides…) reaches
 * a log or a terminal.
 */
function echo (key: string): string {
  let shown = ''
  for (let i = 0; i < key.length;) {
    const c = key.codePointAt(i) as number
    const piece = c === QUOTE || c === BACKSLASH
      ? '\\' + key[i]
      : c >= SPACE && c < 0x7f ? key[i] : `\\u{${c.toString(16)}}`
    if (shown.length + piece.length > ECHO_LENGTH) return `"${shown}…"`
    shown += piece
    i += c > 0xffff ? 2 : 1
  }
  return `"${shown}"`
}
