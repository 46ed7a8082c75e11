import { setTimeout as sleep } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t, { type Test } from 'tap'
import { InvalidJson } from '../../src/http/errors.ts'
import { parseJsonBody } from '../../src/http/json-body.ts'
import { assertError, TOKEN } from '../helpers/app.ts'
import { startServer, type RunningServer } from '../helpers/server.ts'

// The bodies that cost a JSON parser the most: each is read or refused as the default
// BODY_LIMIT allows, in time linear in its size, so no body a client may send holds the
// event loop.

const BODY_LIMIT = 16 * 1024
// Linear time: a worst case four times as large takes less than this many times as long
// (quadratic work would take 16; garbage collection and a busy machine add to 4).
const MAX_GROWTH = 10
// The /health latency bound, as a ratio to a plain body's.
const MAX_RATIO = 10
// How long /health may take to answer while a worst case is handled: this, or MAX_RATIO
// times as long as while a plain body of the same size is handled, whichever is more.
const BUDGET_MS = 100

/** prefix, then as many units as fit, then pad, then suffix: exactly size bytes. */
function filled (prefix: string, unit: string, suffix: string, pad: string, size = BODY_LIMIT): Buffer {
  const room = size - Buffer.byteLength(prefix) - Buffer.byteLength(suffix)
  const count = Math.floor(room / Buffer.byteLength(unit))
  return Buffer.from(prefix + unit.repeat(count) + pad.repeat(room - count * Buffer.byteLength(unit)) + suffix)
}

/** The members, joined into one object padded with spaces to size bytes. */
function object (members: string[], size: number): Buffer {
  const text = `{${members.join(',')}}`
  return Buffer.from(text + ' '.repeat(size - text.length))
}

/** An object with as many distinct short keys as fit. */
function manyKeys (size: number): Buffer {
  const members: string[] = []
  for (let i = 0, length = 2; length + 8 < size; i++) {
    members.push(`"${i.toString(36)}":0`)
    length += members[i].length + 1
  }
  return object(members, size)
}

/** An object of a hundred long distinct keys filling size; when repeated, the last key is the first again, its value `last`. */
function longKeys (size: number, repeated: boolean, last = '0'): Buffer {
  const count = 100
  const length = Math.floor(size / count) - '"":0,'.length - 1
  const keys = Array.from({ length: count }, (_, i) => i.toString(36).padStart(length, '_'))
  if (repeated) keys[count - 1] = keys[0]
  return object(keys.map((key, i) => `"${key}":${i === count - 1 ? last : '0'}`), size)
}

/** Two members of one key, each holding half the body of the same nested value: the deep compare of equal duplicates. */
function equalHalves (size: number): Buffer {
  const half = `[${Array(Math.floor((size / 2 - 16) / 10)).fill('{"b":[0]}').join(',')}]`
  return object([`"a":${half}`, `"a":${half}`], size)
}

// A number literal's conversions (exactness, splitting its digits) on one of BODY_LIMIT digits.
const oneAndZeros = (size = BODY_LIMIT): Buffer => filled('{"id":1.', '0', '1,"name":"a"}', '0', size)
const EQUAL_DUPLICATE = /a key is given twice in one object|duplicate key/

const worstCases: Array<[string, (size: number) => Buffer, RegExp | 'read']> = [
  ['an integer of BODY_LIMIT digits', (size) => filled('{"id":1', '0', ',"name":"a"}', '0', size), 'read'],
  ['1.000…0001', oneAndZeros, /is not an integer, but would be read as 1$/],
  ['1e000…001', (size) => filled('{"id":1e', '0', '1,"name":"a"}', '0', size), 'read'],
  ['-0.000…', (size) => filled('{"id":-0.', '0', ',"name":"a"}', '0', size), 'read'],
  ['zeros, as many as fit', (size) => filled('[', '0,', '0]', ' ', size), 'read'],
  ['[[[[…', (size) => filled('', '[', '', '[', size), /nested too deeply|Array item or end of array/],
  ['{"a":{"a":…', (size) => filled('', '{"a":', '', ' ', size), /nested too deeply|Object value expected/],
  ['as many distinct keys as fit', manyKeys, 'read'],
  ['long distinct keys', (size) => longKeys(size, false), 'read'],
  ['long distinct keys, the first repeated at the very end', (size) => longKeys(size, true), EQUAL_DUPLICATE],
  ['long distinct keys, the first repeated at the very end with another value', (size) => longKeys(size, true, '1'), /duplicate key "_{39}… at position \d+$/],
  ['one key twice, each half the body of the same nested value', equalHalves, EQUAL_DUPLICATE],
  ['a string of \\u0000 escapes', (size) => filled('{"id":1,"name":"', '\\u0000', '"}', 'a', size), 'read'],
  ['a string of \\" escapes', (size) => filled('{"id":1,"name":"', '\\"', '"}', 'a', size), 'read'],
  ['a string of surrogate-pair escapes', (size) => filled('{"id":1,"name":"', '\\ud83c\\udf3f', '"}', 'a', size), 'read'],
  ['a string of 4-byte UTF-8 characters', (size) => filled('{"id":1,"name":"', '🌿', '"}', 'a', size), 'read'],
  ['escapes ending in a lone surrogate', (size) => filled('{"id":1,"name":"', '\\u0000', '\\ud800"}', 'a', size), /lone UTF-16 surrogate/]
]

// Collected before each run, so that a run does not pay for the garbage of the one before.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** The best of five runs, in milliseconds, and what the parser made of the body. */
function timed (body: Buffer): { ms: number, result: unknown } {
  let ms = Infinity
  let result: unknown
  for (let run = 0; run < 5; run++) {
    gc()
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

t.test('every worst-case body of BODY_LIMIT bytes is read or refused', async (t) => {
  for (const [what, make, expected] of worstCases) {
    const body = make(BODY_LIMIT)
    t.equal(body.length, BODY_LIMIT, `${what}: BODY_LIMIT bytes`)
    const { result } = timed(body)
    if (expected === 'read') {
      t.notOk(result instanceof Error, `${what} is read${result instanceof Error ? `, not refused: ${result.message}` : ''}`)
    } else {
      t.ok(result instanceof InvalidJson && expected.test(result.message), `${what} is refused: ${(result as Error).message}`)
    }
  }
})

t.test(`every worst case four times as large takes less than ${MAX_GROWTH} times as long: linear time`, async (t) => {
  // Far larger than BODY_LIMIT: past the sizes where V8 moves a growing array to the old space,
  // which costs a step of its own (JSON.parse too), and past the timer's resolution.
  const size = 128 * 1024
  for (const [what, make] of worstCases) {
    timed(make(size)) // compiled first, as in a service that has been running
    // Quadratic work grows 16 times at every try; a busy machine's noise does not repeat three times.
    let growth = ''
    for (let attempt = 0; attempt < 3; attempt++) {
      const { ms: small } = timed(make(size))
      const { ms: large } = timed(make(4 * size))
      growth = `${small.toFixed(2)} ms, then ${large.toFixed(2)} ms (${(large / small).toFixed(1)} times)`
      if (large < MAX_GROWTH * small) break
      growth += ' at each of three tries'
    }
    t.notMatch(growth, /three tries/, `${what}: ${growth}`)
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
  const bodies: Array<[string, Buffer]> = [
    ['1.000…0001', oneAndZeros()],
    ['long distinct keys and a repeat at the very end', longKeys(BODY_LIMIT, true)],
    ['one key twice, each half the body of the same nested value', equalHalves(BODY_LIMIT)]
  ]
  for (const [what, body] of bodies) {
    const { slowest, polls, res } = await healthWhile(body)
    t.ok(res.statusCode === 400 || res.statusCode === 413, `${what}: answered ${res.statusCode}`)
    assertError(t, res, res.statusCode)
    t.ok(slowest < budget, `${what}: the slowest of ${polls} /health answers in ${slowest.toFixed(1)} ms (${plainSlowest.toFixed(1)} ms behind a plain body)`)
  }
})
