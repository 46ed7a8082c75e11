import { InvalidJson } from './errors.ts'
import { character, codePoint, type Cursor, unexpected } from './json-text.ts'

// The strings of a JSON body, keys and values alike. A string must come out as the
// text it stands for and as nothing else: escapes are decoded in the same single
// pass that finds the string's end, a lone surrogate is refused because no UTF-8 can
// hold it (the store could not keep it as sent), and a value is copied out of the
// body so that keeping it does not keep the whole body alive.

// The character codes this file compares against, its own rather than imported: see json-body.ts.
const SPACE = 0x20
const QUOTE = 0x22
const ZERO = 0x30
const NINE = 0x39
const BACKSLASH = 0x5c
const LOWER_U = 0x75

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

/**
 * The string starting at the quote at pos. Nearly every string has no escape and
 * is sliced whole; a value is then copied out of the body, while a key needs no
 * copy, as V8 makes its own copy of a property name.
 */
export function readString (cursor: Cursor, isValue: boolean): string {
  const text = cursor.text
  const start = cursor.pos + 1
  let i = start
  for (;;) {
    const c = text.charCodeAt(i)
    if (c > QUOTE && c !== BACKSLASH) {
      i++
    } else if (c === QUOTE) {
      cursor.pos = i + 1
      return isValue ? detach(text.slice(start, i)) : text.slice(start, i)
    } else if (c === BACKSLASH) {
      return escapedString(cursor, start)
    } else if (c >= SPACE) {
      i++ // the space and "!"
    } else {
      throw notInString(text, i)
    }
  }
}

/**
 * The string from start, which holds an escape. Its code units are gathered in a
 * buffer and turned into strings a chunk at a time: concatenating each escape onto
 * a string costs ten times as much, and a body can hold half a million escapes.
 */
function escapedString (cursor: Cursor, start: number): string {
  const text = cursor.text
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
      cursor.pos = i + 1
      chunks.push(String.fromCharCode.apply(null, units.subarray(0, n) as unknown as number[]))
      return chunks.length === 1 ? chunks[0] : chunks.join('')
    } else if (c === BACKSLASH) {
      const unit = ESCAPES[text.charCodeAt(i + 1)]
      if (unit !== undefined) {
        units[n++] = unit
        i += 2
      } else if (text.charCodeAt(i + 1) === LOWER_U) {
        n = unicodeEscape(cursor, i, n)
        i = cursor.pos
      } else if (i + 1 < text.length) {
        throw new InvalidJson(`invalid escape at position ${i}: "\\" followed by ${character(text, i + 1)}`)
      } else {
        throw unexpected(text, i + 1, 'an escape')
      }
    } else if (c >= SPACE) {
      units[n++] = c
      i++
    } else {
      throw notInString(text, i)
    }
  }
}

/** Writes the \u escape at i to units from n; returns the new n, pos moved past the escape. */
function unicodeEscape (cursor: Cursor, i: number, n: number): number {
  const text = cursor.text
  const unit = hex4(text, i)
  units[n] = unit
  cursor.pos = i + 6
  if (unit < 0xd800 || unit > 0xdfff) return n + 1
  // A surrogate is a character only as a high one escaped right before a low one;
  // alone it is text no UTF-8 can hold, which the store could not keep as sent.
  if (unit <= 0xdbff && text.charCodeAt(i + 6) === BACKSLASH && text.charCodeAt(i + 7) === LOWER_U) {
    const low = hex4(text, i + 6)
    if (low >= 0xdc00 && low <= 0xdfff) {
      units[n + 1] = low
      cursor.pos = i + 12
      return n + 2
    }
  }
  throw new InvalidJson(`lone UTF-16 surrogate ${text.slice(i, i + 6)} at position ${i}; send well-formed Unicode`)
}

/** Why the character at i cannot be in a string: a raw control character, or the end of the body. */
function notInString (text: string, i: number): Error {
  if (i < text.length) {
    return new InvalidJson(`unescaped control character ${codePoint(text.charCodeAt(i))} in a string at position ${i}`)
  }
  return unexpected(text, i, 'the closing quote of a string')
}

/** The code unit of the \uXXXX escape at i. */
function hex4 (text: string, i: number): number {
  const value = (hexDigit(text.charCodeAt(i + 2)) << 12) | (hexDigit(text.charCodeAt(i + 3)) << 8) |
    (hexDigit(text.charCodeAt(i + 4)) << 4) | hexDigit(text.charCodeAt(i + 5))
  // A digit that is not one is -1, which sets every bit.
  if (value < 0) throw new InvalidJson(`invalid escape at position ${i}: "\\u" must be followed by 4 hex digits`)
  return value
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
