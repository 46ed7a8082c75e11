/**
 * better-sqlite3 against Node's built-in node:sqlite on the store's own work: durable
 * group commits (WAL, synchronous=FULL, batches of INSERT … ON CONFLICT DO NOTHING in
 * one transaction) and point reads, on a real file. `npm run bench:sqlite`; prints a
 * markdown table, each driver's rate as a ratio to better-sqlite3's in the same run.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'

const SCHEMA = 'CREATE TABLE plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT'
const INSERT = 'INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'
const GET = 'SELECT id, name, tag FROM plants WHERE id = ?'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)

/** What the benchmark needs of a driver: a batch written in one durable transaction, a read. */
interface Driver {
  writeBatch: (ids: bigint[]) => void
  get: (id: bigint) => unknown
  close: () => void
}

function betterSqlite (path: string): Driver {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.defaultSafeIntegers(true)
  db.exec(SCHEMA)
  const insert = db.prepare(INSERT)
  const get = db.prepare(GET)
  const batch = db.transaction((ids: bigint[]) => { for (const id of ids) insert.run(id, `plant ${id}`, 'bench') })
  return { writeBatch: (ids) => batch.immediate(ids), get: (id) => get.get(id), close: () => db.close() }
}

async function nodeSqlite (path: string): Promise<Driver> {
  const { DatabaseSync } = await import('node:sqlite')
  const db = new DatabaseSync(path)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL')
  db.exec(SCHEMA)
  const insert = db.prepare(INSERT)
  const get = db.prepare(GET)
  get.setReadBigInts(true)
  return {
    writeBatch: (ids) => {
      db.exec('BEGIN IMMEDIATE')
      try {
        for (const id of ids) insert.run(id, `plant ${id}`, 'bench')
        db.exec('COMMIT')
      } catch (err) {
        db.exec('ROLLBACK')
        throw err
      }
    },
    get: (id) => get.get(id),
    close: () => db.close()
  }
}

/** Operations a second over SECONDS of repeated `work`, each call doing `perCall` operations. */
function rate (work: (i: number) => void, perCall: number): number {
  const started = performance.now()
  let calls = 0
  while (performance.now() - started < SECONDS * 1000) work(calls++)
  return calls * perCall / ((performance.now() - started) / 1000)
}

const opened: Array<{ name: string, driver: Driver, dir: string, next: bigint }> = []
for (const [name, open] of [['better-sqlite3', betterSqlite], ['node:sqlite', nodeSqlite]] as const) {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-drivers-'))
  opened.push({ name, driver: await open(join(dir, 'plants.db')), dir, next: 0n })
}
const scenarios: Array<[string, (o: typeof opened[number], i: number) => void, number]> = [512, 64, 1].map((size) => [
  `durable create, batches of ${size}`,
  (o) => o.driver.writeBatch(Array.from({ length: size }, () => o.next++)),
  size
])
scenarios.push(['get by id', (o, i) => o.driver.get(BigInt(i) * 7919n % o.next), 1])

// The drivers take turns, twice, and each keeps its better round: the machine's noise
// then falls on both alike.
const rows: Array<{ scenario: string, driver: string, perSecond: number }> = []
for (const [scenario, work, perCall] of scenarios) {
  for (const o of opened) rows.push({ scenario, driver: o.name, perSecond: 0 })
  for (let round = 0; round < 2; round++) {
    for (const o of opened) {
      const row = rows.find((r) => r.scenario === scenario && r.driver === o.name)!
      row.perSecond = Math.max(row.perSecond, rate((i) => work(o, i), perCall))
    }
  }
}
for (const o of opened) {
  o.driver.close()
  rmSync(o.dir, { recursive: true })
}

console.log(`# SQLite drivers, node ${process.version}, best of two ${SECONDS} s rounds\n`)
console.log('| scenario | driver | per second | vs better-sqlite3 |')
console.log('|---|---|---|---|')
for (const row of rows) {
  const baseline = rows.find((r) => r.scenario === row.scenario && r.driver === 'better-sqlite3')!.perSecond
  console.log(`| ${row.scenario} | ${row.driver} | ${Math.round(row.perSecond).toLocaleString('en')} | ${(row.perSecond / baseline).toFixed(2)}× |`)
}
