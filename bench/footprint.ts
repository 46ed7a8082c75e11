/**
 * The footprint section (BENCH_MILLION, a million plants by default): what a store holds
 * on to once it has many plants. Each store's server is filled through POST /plants,
 * its RSS read empty, filled and at its peak, its database measured on disk while it
 * runs, and the rows stored counted afterwards rather than assumed. For a store with
 * `rates`, reads by id, pages anywhere in the store and creates are then measured on the
 * filled server and on a server holding SMALL_STORE plants, taking turns: whether a
 * request's cost stays flat as the store grows.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import type { LoadGenerator } from './load.ts'
import { memoryKb } from './machine.ts'
import { fill, idBlock } from './measure.ts'
import { stop } from './processes.ts'
import { socketErrors, type Footprint, type LoadResult, type SizeRate } from './results.ts'
import { createPlant, getPageAfter, getPlant, SMALL_STORE, type RequestSpec, type ServerSpec } from './scenarios.ts'
import { type Server, startServer } from './server.ts'
import { fail, settings } from './settings.ts'

// Reads before creates, so that they find exactly the plants filled; with the ids a read
// cycles over: a page starts at most 100 plants from the end, so every page is full
// (short pages would flatter the small store).
const SIZE_REQUESTS: Array<[string, RequestSpec, (count: number) => number]> = [
  ['GET /plants/{id}', getPlant, (count) => count],
  ['GET /plants?limit=100&after={id}', getPageAfter, (count) => count - 100],
  ['POST /plants', createPlant, (count) => count]
]

export async function footprint (store: string, spec: ServerSpec, load: LoadGenerator, root: string, count: number, withRates: boolean): Promise<Footprint> {
  const out: Footprint = { store }
  const dir = join(root, `million-${store}`)
  mkdirSync(dir, { recursive: true })
  process.stderr.write(`bench: ${count.toLocaleString('en-US')} plants into ${store}\n`)
  const server = await startServer(spec, dir)
  try {
    out.rssEmptyKb = memoryKb(server.pid, 'VmRSS')
    out.fill = await fill(load, server, count, 1)
    out.rssKb = memoryKb(server.pid, 'VmRSS')
    out.hwmKb = memoryKb(server.pid, 'VmHWM')
    const db = join(dir, 'plants.db')
    if (existsSync(db)) {
      const size = (path: string): number => existsSync(path) ? statSync(path).size : 0
      // Measured while the service runs: what it occupies in service, WAL included.
      out.disk = { db: size(db), wal: size(`${db}-wal`), shm: size(`${db}-shm`) }
      out.rows = countRows(db)
    }
    if (withRates) {
      out.smallCount = SMALL_STORE
      out.rates = await sizeRates(store, spec, load, root, server, count)
    }
  } finally {
    await stop(server.child)
  }
  return out
}

/**
 * Counted, not assumed: a fill that lost creates must not pass for a full one. Read
 * while the service runs (WAL lets a reader in beside it), before the rates add plants.
 */
function countRows (db: string): number {
  const reader = new Database(db, { readonly: true })
  try {
    return Number(reader.prepare('SELECT count(*) AS n FROM plants').pluck().get())
  } finally {
    reader.close()
  }
}

/**
 * SIZE_REQUESTS on the small store and on the filled one, in BENCH_SIZE_ROUNDS rounds
 * that alternate which goes first (small, filled, filled, small, …): a single run of
 * each moved by 10 to 30% with this machine's drift, more than the change it looks for.
 * Every round's small store is a new one of SMALL_STORE plants, so that its creates
 * start from that size each time; the filled store only grows by its creates.
 */
async function sizeRates (store: string, spec: ServerSpec, load: LoadGenerator, root: string, filled: Server, count: number): Promise<SizeRate[]> {
  const out = SIZE_REQUESTS.map(([request]) => ({ request, small: [] as LoadResult[], filled: [] as LoadResult[] }))
  const keep = (which: 'small' | 'filled', results: LoadResult[]): void => { results.forEach((result, i) => out[i][which].push(result)) }
  for (let round = 1; round <= settings.sizeRounds; round++) {
    const onSmall = async (): Promise<void> => { keep('small', await smallStoreRates(store, spec, load, root, round)) }
    const onFilled = async (): Promise<void> => { keep('filled', await rates(load, filled, count)) }
    if (round % 2 === 1) {
      await onSmall()
      await onFilled()
    } else {
      await onFilled()
      await onSmall()
    }
  }
  return out
}

async function smallStoreRates (store: string, spec: ServerSpec, load: LoadGenerator, root: string, round: number): Promise<LoadResult[]> {
  const dir = join(root, `small-${store}-${round}`)
  mkdirSync(dir, { recursive: true })
  process.stderr.write(`bench: ${SMALL_STORE.toLocaleString('en-US')} plants into a new ${store} store, round ${round}\n`)
  const server = await startServer(spec, dir)
  try {
    await fill(load, server, SMALL_STORE, 1)
    return await rates(load, server, SMALL_STORE)
  } finally {
    await stop(server.child)
  }
}

/** Each of SIZE_REQUESTS on a server holding plants 1..count, after a warm-up of its own. */
async function rates (load: LoadGenerator, server: Server, count: number): Promise<LoadResult[]> {
  const results: LoadResult[] = []
  for (const [name, request, cycle] of SIZE_REQUESTS) {
    process.stderr.write(`  ${name} at ${count.toLocaleString('en-US')} plants\n`)
    const ids = () => request.ids === 'prefilled' ? { base: 1, cycle: cycle(count) } : { base: idBlock() }
    if (settings.warmupSeconds > 0) await load.run({ port: server.port, request, seconds: settings.warmupSeconds, ...ids() })
    const result = await load.run({ port: server.port, request, seconds: settings.seconds, ...ids() })
    if (result.statusErrors + socketErrors(result) > 0) fail(`${name} at ${count} plants had errors`)
    results.push(result)
  }
  return results
}
