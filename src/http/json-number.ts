import { InvalidJson } from './errors.ts'
import { cut, type Cursor } from './json-text.ts'

// The numbers of a JSON body, read exactly. JSON.parse reads every number as a
// double, which rounds integers beyond 2^53 and can turn a fraction into an integer;
// here an integer a double cannot hold becomes a bigint, and a fraction a double
// would read as an integer is refused. A literal is bounded in length before
// anything converts it, so no number can cost more than a short one.

// The character codes this file compares against, its own rather than imported: see json-body.ts.
const PLUS = 0x2b
const MINUS = 0x2d
const DOT = 0x2e
const ZERO = 0x30
const NINE = 0x39
const UPPER_E = 0x45
const LOWER_E = 0x65

/** A number literal longer than this is refused before anything converts it. */
export const MAX_NUMBER_LENGTH = 64

// Only ever run on a literal of at most MAX_NUMBER_LENGTH characters.
const NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
// An integer of at most 15 digits is below 2^53, so summing its digits as a double is exact.
const SAFE_DIGITS = 15
// An integer with more significant digits than this is far outside int64: its double
// is refused by the validator anyway, and it is never worth building as a bigint.
const MAX_EXACT_DIGITS = 20

/** The number whose literal starts at pos, which holds "-" or a digit. */
export function readNumber (cursor: Cursor): number | bigint {
  const text = cursor.text
  const start = cursor.pos
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
  cursor.pos = i
  const count = integerEnd - digits
  // A short integer, which is nearly every number a body holds, needs no conversion.
  if (i === integerEnd && count > 0 && count <= SAFE_DIGITS && (count === 1 || text.charCodeAt(digits) !== ZERO)) {
    return digits === start ? value : -value
  }
  return exactNumber(text.slice(start, i), start)
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
