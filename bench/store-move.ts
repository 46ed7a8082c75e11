/**
 * `npm run bench:move` (builds first): a SQLite store of BENCH_MOVE_PLANTS plants (1,000,000 by default, ids
 * spread over the whole int64 range) moved to a throwaway PostgreSQL cluster with `npm run store -- copy`, while
 * a service on the SQLite file goes on creating. Then an instance serves the PostgreSQL database, and every plant
 * is read back through it and compared with the file: each plant created before the copy began must be there,
 * exact, and nothing else but plants the source had. Prints the copy's time and its report.
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { openDatabase } from '../src/store/sqlite/open.ts'
import { startPostgres } from '../test/helpers/postgres-cluster.ts'
import { startServer, type Server } from './measure.ts'
import { buildAt, ROOT } from './scenarios.ts'

const PLANTS = Number(process.env.BENCH_MOVE_PLANTS ?? 1_000_000)
// The load's ids are below LOAD_IDS; the prefilled plants' ids are not.
const LOAD_IDS = 2n ** 32n
const LOAD_CLIENTS = 4
const seconds = (since: number): string => ((performance.now() - since) / 1000).toFixed(1)

interface Plant { id: bigint, name: string, tag?: string }

/** The prefilled file: random ids over the whole range (the load's aside), names with a NUL, emoji and CJK, a tag on every third. */
function prefill (path: string): void {
  const db = openDatabase(path)
  const insert = db.prepare('INSERT OR IGNORE INTO plants (id, name, tag) VALUES (?, ?, ?)')
  db.transaction(() => {
    for (let stored = 0; stored < PLANTS;) {
      const id = randomBytes(8).readBigInt64BE()
      if (id >= 0n && id < LOAD_IDS) continue
      stored += insert.run(id, `plant ${stored}\u0000🌿 植物`, stored % 3 === 0 ? `tag ${stored % 7}` : null).changes
    }
  })()
  db.close()
}

/** Creates plants (ids below LOAD_IDS), one request after another per client, until stopped; `acked` gets each id answered 200. */
function createLoad (server: Server, acked: bigint[]): () => Promise<void> {
  const stopped = new AbortController()
  const clients = Array.from({ length: LOAD_CLIENTS }, async (_, client) => {
    for (let id = BigInt(client + 1); !stopped.signal.aborted; id += BigInt(LOAD_CLIENTS)) {
      if ((await server.call('POST', '/plants', `{"id":${id},"name":"live ${id}"}`)).status === 200) acked.push(id)
    }
  })
  return async () => {
    stopped.abort()
    await Promise.all(clients)
  }
}

/** Every plant a service holds, ascending by id, a page at a time; ids read exactly. */
async function * served (server: Server): AsyncGenerator<Plant[]> {
  for (let after: bigint | undefined; ;) {
    const { text } = await server.call('GET', `/plants?limit=1000${after === undefined ? '' : `&after=${after}`}`)
    const page = JSON.parse(text, (key, value, context?: { source?: string }) =>
      key === 'id' && typeof value === 'number' ? BigInt(context!.source!) : value) as Plant[]
    if (page.length === 0) return
    yield page
    after = page.at(-1)!.id
  }
}

/** Reads every plant `server` serves against the source file: those missing (all but the load's after `ackedBefore`) and those not the source's exactly. */
async function compare (server: Server, source: string, ackedBefore: Set<bigint>): Promise<{ checked: number, missing: number, wrong: number }> {
  const db = new Database(source, { readonly: true })
  db.defaultSafeIntegers(true)
  const rows = db.prepare<[], { id: bigint, name: string, tag: string | null }>('SELECT id, name, tag FROM plants ORDER BY id').iterate()
  const counts = { checked: 0, missing: 0, wrong: 0 }
  const mustBeThere = (id: bigint): boolean => id >= LOAD_IDS || ackedBefore.has(id)
  let next = rows.next()
  for await (const page of served(server)) {
    for (const plant of page) {
      // Source plants before this one: only the load's, created after the copy began, may be absent.
      for (; !next.done! && next.value.id < plant.id; next = rows.next()) if (mustBeThere(next.value.id)) counts.missing++
      const row = next.done! ? undefined : next.value
      if (row?.id !== plant.id || row.name !== plant.name || (row.tag ?? undefined) !== plant.tag) counts.wrong++
      else next = rows.next()
      counts.checked++
    }
  }
  for (; !next.done!; next = rows.next()) if (mustBeThere(next.value.id)) counts.missing++
  db.close()
  return counts
}

const dir = mkdtempSync(join(tmpdir(), 'plant-move-'))
const teardowns: Array<() => Promise<void>> = []
const services: Server[] = []
try {
  const build = buildAt(ROOT, 'this checkout')
  const service = async (url: string): Promise<Server> => {
    const server = await startServer([process.execPath, ...build.flags, build.entry], { DATABASE_URL: url, LOG_LEVEL: 'warn', RATE_LIMIT_PER_TOKEN: '0' }, join(dir, `service-${services.length}.log`))
    services.push(server)
    return server
  }
  const source = join(dir, 'plants.db')
  let started = performance.now()
  prefill(source)
  console.log(`prefilled ${PLANTS.toLocaleString('en')} plants in ${seconds(started)} s`)
  const postgres = await startPostgres({ teardown: (fn) => { teardowns.push(fn) } })
  const destination = await postgres.createDatabase('moved')

  const old = await service(`sqlite:${source}`)
  const acked: bigint[] = []
  const stopLoad = createLoad(old, acked)
  await sleep(2000)
  const ackedBefore = new Set(acked)
  started = performance.now()
  // It fails, with its stderr, if the copy exits non-zero.
  const { stdout: report } = await promisify(execFile)(process.execPath, [join(ROOT, 'dist/scripts/store/main.js'), 'copy', `sqlite:${source}`, destination])
  const took = (performance.now() - started) / 1000
  const during = acked.length - ackedBefore.size
  await stopLoad()
  await old.stop()
  console.log(`${report}copy: ${took.toFixed(1)} s (${Math.round(PLANTS / took).toLocaleString('en')} plants/s), ` +
    `the service acknowledged ${ackedBefore.size} creates before it began and ${during} while it ran`)

  const moved = await service(destination)
  started = performance.now()
  const { checked, missing, wrong } = await compare(moved, source, ackedBefore)
  console.log(`served from PostgreSQL: ${checked.toLocaleString('en')} plants read through GET /plants in ${seconds(started)} s; ${missing} missing, ${wrong} not the source's exactly`)
  if (missing + wrong > 0) process.exitCode = 1
} finally {
  for (const server of services) await server.stop()
  for (const teardown of teardowns) await teardown()
  rmSync(dir, { recursive: true, force: true })
}
