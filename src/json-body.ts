import { randomUUID } from 'node:crypto'
import sjson from 'secure-json-parse'
import { InvalidJson } from './http-errors.js'

// Parses request bodies exactly. JSON.parse reads every number as a double, which
// rounds integers beyond 2^53 (9007199254740993 becomes ...992) and can turn a
// fraction into an integer (4503599627370496.5 becomes ...496). Integers that a
// double cannot hold are read as bigint instead; a fraction that would be read as
// an integer is refused. Invalid UTF-8 and lone surrogates are refused rather than
// silently replaced, and __proto__/constructor keys are refused as Fastify does.

const utf8 = new TextDecoder('utf-8', { fatal: true })

// Only a number literal with 16 or more digits, or an exponent, can lose precision;
// bodies without one (nearly all) take JSON.parse as it is.
const MAY_LOSE_PRECISION = /[\d.]{16}|\d[eE]/
// Raw lone surrogates cannot survive UTF-8 decoding; escaped ones can.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/
const NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
// An integer with more digits than this is far outside int64: its double is refused anyway.
const MAX_EXACT_DIGITS = 20

const secure = { protoAction: 'error', constructorAction: 'error' } as const

export function parseJsonBody (raw: Buffer): unknown {
  // No body at all: the route's schema decides whether one was required.
  if (raw.length === 0) return undefined
  let text: string
  try {
    text = utf8.decode(raw)
  } catch {
    throw new InvalidJson('it is not valid UTF-8')
  }
  if (text.trim() === '') return undefined
  const exact = MAY_LOSE_PRECISION.test(text)
  const surrogates = SURROGATE_ESCAPE.test(text)
  if (!exact && !surrogates) return parse(text)
  return parseExactly(text, surrogates)
}

function parse (text: string, reviver?: (key: string, value: unknown) => unknown): unknown {
  try {
    return sjson.parse(text, reviver, secure)
  } catch (err) {
    if (err instanceof SyntaxError) {
      // sjson's own refusal of __proto__ / constructor.prototype is a SyntaxError too
      throw new InvalidJson(err.message.replace(/^Unexpected/, 'unexpected'))
    }
    throw err
  }
}

function parseExactly (text: string, surrogates: boolean): unknown {
  // Integers beyond what a double holds are swapped for a string that only this
  // call can recognise, then revived as bigint.
  const marker = `\u0000int64:${randomUUID()}:`
  let rewritten = ''
  let copied = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) { // a string: skip it, escapes included
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) {
        if (text.charCodeAt(i) === 0x5c) i++
      }
      continue
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) continue
    let end = i + 1
    while (end < text.length && isNumberChar(text.charCodeAt(end))) end++
    const big = exactInteger(text.slice(i, end))
    if (big !== undefined) {
      rewritten += text.slice(copied, i) + JSON.stringify(marker + big.toString())
      copied = end
    }
    i = end - 1
  }
  const source = copied === 0 ? text : rewritten + text.slice(copied)
  return parse(source, (_key, value) => {
    if (typeof value !== 'string') return value
    if (value.startsWith(marker)) return BigInt(value.slice(marker.length))
    if (surrogates && !value.isWellFormed()) {
      throw new InvalidJson('a string holds a lone UTF-16 surrogate (\\ud800-\\udfff); send well-formed Unicode')
    }
    return value
  })
}

function isNumberChar (c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d || c === 0x2b || c === 0x65 || c === 0x45
}

/**
 * The exact value of a number literal when it is an integer a double cannot hold,
 * undefined when JSON.parse reads it exactly (or it is not valid JSON: JSON.parse
 * reports that). Throws when the literal is a fraction a double would round to an integer.
 */
function exactInteger (literal: string): bigint | undefined {
  const m = NUMBER.exec(literal)
  if (m === null) return undefined
  const [, sign, whole, fraction, exponent] = m
  const double = Number(literal)
  if (fraction === undefined && exponent === undefined) {
    return Number.isSafeInteger(double) ? undefined : BigInt(literal)
  }
  let digits = (whole + (fraction ?? '')).replace(/^0+/, '')
  if (digits === '') return undefined // a zero
  let scale = Number(exponent ?? 0) - (fraction ?? '').length
  const significant = digits.replace(/0+$/, '')
  scale += digits.length - significant.length
  digits = significant
  if (scale < 0) {
    if (Number.isInteger(double)) {
      throw new InvalidJson(`the number ${literal} is not an integer, but would be read as ${double}`)
    }
    return undefined
  }
  if (Number.isSafeInteger(double) || digits.length + scale > MAX_EXACT_DIGITS) return undefined
  return BigInt(sign + digits + '0'.repeat(scale))
}
