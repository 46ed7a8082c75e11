import assert from 'node:assert/strict'
import { isUtf8 } from 'node:buffer'
import { inspect } from 'node:util'
import type fc from 'fast-check'
import { InvalidJson } from '../../src/http/errors.ts'
import { parseJsonBody } from '../../src/http/json-body.ts'

// JSON.parse as the reference for the JSON body parser (test/json-body.test.ts): what
// the parser must read or refuse for one body, and the exact value of a number literal.

export const MAX_MESSAGE_LENGTH = 200
// What the parser refuses although JSON.parse accepts it, each on purpose.
const STRICTER = new RegExp([
  'duplicate key', 'a key is given twice', 'forbidden prototype property', 'lone UTF-16 surrogate',
  'nested too deeply', 'is not an integer, but would be read as'
].join('|'))
const JSON_WHITESPACE_ONLY = /^[ \t\n\r]*$/

export type Outcome = { value: unknown } | { error: Error }

export function outcome (run: () => unknown): Outcome {
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
export function agreesWithJsonParse (body: Buffer): Outcome {
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

export function wellFormed (value: fc.JsonValue): boolean {
  if (typeof value === 'string') return value.isWellFormed()
  if (Array.isArray(value)) return value.every(wellFormed)
  if (value === null || typeof value !== 'object') return true
  return Object.entries(value).every(([key, inner]) => key.isWellFormed() && wellFormed(inner as fc.JsonValue))
}

/**
 * What the parser must read a number literal as: its exact value, as a number when a
 * double holds it exactly, a bigint for an integer beyond 2^53 of at most 20 digits
 * (anything longer is outside int64 and stays a double); or a RegExp matching the
 * refusal; undefined for what does not start as a number. Reasoned on the literal's
 * digits with bigint arithmetic, not on doubles.
 */
export function expectedNumber (literal: string): { value: number | bigint } | { refused: RegExp } | undefined {
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
