/**
 * Where a request's CPU goes (BENCH_PROFILE=1): the server runs under `node --cpu-prof`, and the
 * samples of the measured run are charged to the part of the request they were taken in, per
 * request. A sample belongs to the first frame, from the leaf up, that a part below names: work
 * Fastify or Node does after a hook calls done() is theirs, not the hook's.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The parts, most specific first; each a pattern over `function@url` of a frame. */
const PARTS: Array<[string, RegExp]> = [
  ['log line', /requestCompleted@|\/pino\/|sonic-boom|\/src\/log\//],
  ['metrics', /prom-client|\/plugins\/metrics\.js|instrumented-store/],
  ['store', /\/src\/store\/|better-sqlite3|\/pg\/|pg-protocol|^fsync@/],
  ['webhook delivery', /\/src\/webhooks\/|undici/],
  ['auth (token, rate, scope)', /bearer-auth|\/plugins\/auth|\/src\/tokens\/|rate-limit|rate-store/],
  ['service hooks', /\/src\/plugins\/|\/src\/http\/(answer-headers|request-target|unrouted|client-error|request-id)/],
  ['body parse', /json-body|lossless-json|content-type-parser/],
  ['validation', /ajv|\/src\/http\/validation|fastify\/lib\/validation/],
  ['serializer', /fast-json-stringify|^serialize@.*fastify/],
  ['handler', /\/src\/plants\/|bench\/framework/],
  ['Fastify', /\/fastify\/|find-my-way|avvio/],
  // Native writes are charged to their callers: a socket's to Node, the log file's to the log line.
  ['Node: HTTP and sockets', /node:_http|node:net|node:internal\/stream|node:events/]
]

interface CpuProfile {
  nodes: Array<{ id: number, callFrame: { functionName: string, url: string }, children?: number[] }>
  samples: number[]
  timeDeltas: number[]
}

/** Microseconds of CPU per request for each part, over samples taken between fromMs and toMs of the profile. */
export function attribute (dir: string, requests: number, fromMs: number, toMs: number): Record<string, number> {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))
  if (file === undefined) return {}
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile
  const parent = new Map<number, number>()
  const frames = new Map<number, string>()
  for (const { id, callFrame, children = [] } of profile.nodes) {
    frames.set(id, `${callFrame.functionName}@${callFrame.url}`)
    for (const child of children) parent.set(child, id)
  }
  const partOf = new Map<number, string>()
  const part = (leaf: number): string => {
    const known = partOf.get(leaf)
    if (known !== undefined) return known
    let found: string | undefined
    for (let id: number | undefined = leaf; id !== undefined && found === undefined; id = parent.get(id)) {
      found = PARTS.find(([, pattern]) => pattern.test(frames.get(id!)!))?.[0]
    }
    const leafName = frames.get(leaf)!
    found ??= leafName.startsWith('(garbage collector)') ? 'GC' : leafName.startsWith('(idle)') ? 'idle' : 'other (V8, microtasks)'
    partOf.set(leaf, found)
    return found
  }
  const us: Record<string, number> = {}
  let atMs = 0
  for (let i = 0; i < profile.samples.length; i++) {
    atMs += profile.timeDeltas[i] / 1000
    if (atMs < fromMs || atMs > toMs) continue
    const name = part(profile.samples[i])
    if (name !== 'idle') us[name] = (us[name] ?? 0) + profile.timeDeltas[i] / requests
  }
  return us
}

/** The parts as table rows, a column per profiled row, largest first (by their largest column). */
export function partsTable (rows: Array<{ name: string, parts: Record<string, number> }>): string[][] {
  const largest = (name: string): number => Math.max(...rows.map((row) => row.parts[name] ?? 0))
  const names = [...new Set(rows.flatMap((row) => Object.keys(row.parts)))].sort((a, b) => largest(b) - largest(a))
  const total = (parts: Record<string, number>): number => Object.values(parts).reduce((sum, v) => sum + v, 0)
  return [
    ['µs of CPU per request', ...rows.map((row) => row.name)],
    ...names.map((name) => [name, ...rows.map((row) => (row.parts[name] ?? 0).toFixed(1))]),
    ['total', ...rows.map((row) => total(row.parts).toFixed(1))]
  ]
}
