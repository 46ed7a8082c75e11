import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { InvalidJson } from '../src/http/errors.ts'
import { MAX_VALUES, parseJsonBody } from '../src/http/json-body.ts'
import { assertError, TOKEN } from './helpers/app.ts'
import { startServer, type RunningServer } from './helpers/server.ts'

// The bodies that cost a JSON parser the most, each exactly as large as the default
// BODY_LIMIT allows: each is read or refused in time linear in its size, so no body a
// client may send holds the event loop.

const BODY_LIMIT = 1024 * 1024
// A worst case may take at most this many times as long as a plain body of the same
// size, measured just before it: a bound on the work that holds on a slow machine and
// under coverage's instrumentation alike, where an absolute budget did not (a body of
// escapes took 7 to 14 ms here, 78 to 100 ms in a CI run under coverage). The parser
// before this one took minutes.
const MAX_RATIO = 10
// How long /health may take to answer while a worst case is handled: this, or MAX_RATIO
// times as long as while a plain body of the same size is handled, whichever is more (a
// CI run under coverage had /health wait 125 ms behind a worst case).
const BUDGET_MS = 100

/** prefix, then as many units as fit, then pad, then suffix: exactly BODY_LIMIT bytes. */
function filled (prefix: string, unit: string, suffix: string, pad: string): Buffer {
  const room = BODY_LIMIT - Buffer.byteLength(prefix) - Buffer.byteLength(suffix)
  const count = Math.floor(room / Buffer.byteLength(unit))
  return Buffer.from(prefix + unit.repeat(count) + pad.repeat(room - count * Buffer.byteLength(unit)) + suffix)
}

/** An object with as many distinct short keys as fit, far more than MAX_VALUES. */
function manyKeys (): Buffer {
  const members: string[] = []
  let size = 2
  for (let i = 0; ; i++) {
    const member = `"${i.toString(36)}":0`
    if (size + member.length + 1 > BODY_LIMIT) break
    members.push(member)
    size += member.length + 1
  }
  const text = `{${members.join(',')}}`
  return Buffer.from(text + ' '.repeat(BODY_LIMIT - text.length))
}

/**
 * An object with as many distinct keys as MAX_VALUES allows, each long enough to fill
 * BODY_LIMIT together; when duplicated, its last key repeats the first.
 */
function longKeys (duplicated: boolean): Buffer {
  const count = MAX_VALUES - 1 // the object itself is a value too
  const length = Math.floor(BODY_LIMIT / count) - '"":0,'.length
  const keys = Array.from({ length: count }, (_, i) => i.toString(36).padStart(length, '_'))
  if (duplicated) keys[count - 1] = keys[0]
  const text = `{${keys.map((key) => `"${key}":0`).join(',')}}`
  return Buffer.from(text + ' '.repeat(BODY_LIMIT - text.length))
}

/** An array of as many of these items as fit in BODY_LIMIT, or only as many as MAX_VALUES allows. */
function manyItems (items: string[], fill: boolean): Buffer {
  const count = fill ? Infinity : MAX_VALUES - 1
  const parts: string[] = []
  let size = 2
  for (let i = 0; i < count; i++) {
    const item = items[i % items.length]
    if (size + item.length + 1 > BODY_LIMIT) break
    parts.push(item)
    size += item.length + 1
  }
  const text = `[${parts.join(',')}]`
  return Buffer.from(text + ' '.repeat(BODY_LIMIT - text.length))
}

// The parser before this one took minutes on this, in a regular expression of quadratic time.
const oneAndZeros = (): Buffer => filled('{"id":1.', '0', '1,"name":"a"}', '0')
const TOO_MANY = new RegExp(`more than ${MAX_VALUES} values at position \\d+`)
const LONGEST_NUMBERS = ['9'.repeat(64), '0.' + '1234567890'.repeat(7).slice(0, 62), '-1.5e' + '0'.repeat(58) + '1']

const worstCases: Array<[string, () => Buffer, RegExp | 'read']> = [
  ['an integer of 1 MiB digits', () => filled('{"id":1', '0', ',"name":"a"}', '0'), /a number at position 6 is longer than 64 characters/],
  ['1.000…0001', oneAndZeros, /a number at position 6 is longer than 64 characters/],
  ['1e000…001', () => filled('{"id":1e', '0', '1,"name":"a"}', '0'), /a number at position 6 is longer than 64 characters/],
  ['-0.000…', () => filled('{"id":-0.', '0', ',"name":"a"}', '0'), /a number at position 6 is longer than 64 characters/],
  ['numbers of 64 characters, as many as MAX_VALUES allows', () => manyItems(LONGEST_NUMBERS, false), 'read'],
  ['numbers of 64 characters, as many as fit', () => manyItems(LONGEST_NUMBERS, true), TOO_MANY],
  ['zeros, as many as fit', () => manyItems(['0'], true), TOO_MANY],
  ['[[[[…', () => filled('', '[', '', '['), /nesting deeper than 64 levels at position 64/],
  ['{"a":{"a":…', () => filled('', '{"a":', '', ' '), /nesting deeper than 64 levels at position 320/],
  ['as many distinct keys as fit', manyKeys, TOO_MANY],
  ['long distinct keys, as many as MAX_VALUES allows', () => longKeys(false), 'read'],
  ['long distinct keys, the first repeated at the very end', () => longKeys(true), /duplicate key "_{40}…" at position \d+/],
  ['a string of \\u0000 escapes', () => filled('{"id":1,"name":"', '\\u0000', '"}', 'a'), 'read'],
  ['a string of \\" escapes', () => filled('{"id":1,"name":"', '\\"', '"}', 'a'), 'read'],
  ['a string of surrogate-pair escapes', () => filled('{"id":1,"name":"', '\\ud83c\\udf3f', '"}', 'a'), 'read'],
  ['a string of 4-byte UTF-8 characters', () => filled('{"id":1,"name":"', '🌿', '"}', 'a'), 'read'],
  ['escapes ending in a lone surrogate', () => filled('{"id":1,"name":"', '\\u0000', '\\ud800"}', 'a'), /lone UTF-16 surrogate/]
]

/** The best of three runs, in milliseconds, and what the parser made of the body. */
function timed (body: Buffer): { ms: number, result: unknown } {
  let ms = Infinity
  let result: unknown
  for (let run = 0; run < 3; run++) {
    const start = performance.now()
    try {
      result = parseJsonBody(body)
    } catch (error) {
      result = error
    }
    ms = Math.min(ms, performance.now() - start)
  }
  return { ms, result }
}

t.test(`every worst-case body of BODY_LIMIT bytes is read or refused within ${MAX_RATIO} times a plain body's time`, async (t) => {
  const plain = filled('{"id":1,"name":"', 'a', '"}', 'a')
  for (const [what, make, expected] of worstCases) {
    const body = make()
    t.equal(body.length, BODY_LIMIT, `${what}: BODY_LIMIT bytes`)
    const { ms: plainMs } = timed(plain)
    const { ms, result } = timed(body)
    if (expected === 'read') {
      t.notOk(result instanceof Error, `${what} is read${result instanceof Error ? `, not refused: ${result.message}` : ''}`)
    } else {
      t.ok(result instanceof InvalidJson && expected.test(result.message), `${what} is refused: ${(result as Error).message}`)
    }
    t.ok(ms < MAX_RATIO * plainMs, `${what}: ${ms.toFixed(1)} ms, ${(ms / plainMs).toFixed(1)} times a plain body's ${plainMs.toFixed(1)} ms`)
  }
})

/** How long GET /health took to answer, in milliseconds. */
async function healthLatency (t: Test, server: RunningServer): Promise<number> {
  const res = await server.request('GET', '/health', { token: null })
  if (res.statusCode !== 200) t.fail(`/health answered ${res.statusCode}`)
  return res.ms
}

t.test('a running service answers /health promptly while it handles a worst-case body', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN })
  // A service that has been running has its whole request path compiled; in a fresh
  // process the first large body costs tens of milliseconds of compiling and warming
  // up besides the parse, the same for any body.
  const create = async (body: string | Buffer) => await server.request('POST', '/plants', { body })
  await create('{"id":1,"name":"warm"}')
  const plain = filled('{"id":2,"name":"', 'a', '"}', 'a')
  await create(plain)
  await healthLatency(t, server)
  /** The slowest /health answer while `body` is handled, and the body's answer. */
  const healthWhile = async (body: Buffer) => {
    let answered = false
    const post = create(body).finally(() => { answered = true })
    const latencies: number[] = []
    // Polls until the answer, and a little after, so the parse is surely among them.
    for (let after = 0; after < 3; after += answered ? 1 : 0) {
      latencies.push(await healthLatency(t, server))
      await sleep(2)
    }
    return { slowest: Math.max(...latencies), polls: latencies.length, res: await post }
  }
  const { slowest: plainSlowest } = await healthWhile(plain)
  const budget = Math.max(BUDGET_MS, MAX_RATIO * plainSlowest)
  // The parser before this one spent minutes on the first; the second costs this one the most.
  const bodies: Array<[string, Buffer]> = [
    ['1.000…0001', oneAndZeros()],
    ['long distinct keys and a repeat at the very end', longKeys(true)]
  ]
  for (const [what, body] of bodies) {
    const { slowest, polls, res } = await healthWhile(body)
    t.ok(res.statusCode === 400 || res.statusCode === 413, `${what}: answered ${res.statusCode}`)
    assertError(t, res, res.statusCode)
    t.ok(slowest < budget, `${what}: the slowest of ${polls} /health answers in ${slowest.toFixed(1)} ms (${plainSlowest.toFixed(1)} ms behind a plain body)`)
  }
})
