/**
 * The footprint section (BENCH_MILLION, a million plants by default): what a store holds
 * on to once it has many plants. Each store's server is filled through POST /plants,
 * its RSS read empty, filled and at its peak, its database measured on disk while it
 * runs, and the rows stored counted afterwards rather than assumed.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import type { LoadGenerator } from './load.js'
import { memoryKb } from './machine.js'
import { fill } from './measure.js'
import { stop } from './processes.js'
import type { Footprint } from './results.js'
import type { ServerSpec } from './scenarios.js'
import { startServer } from './server.js'

export async function footprint (store: string, spec: ServerSpec, load: LoadGenerator, root: string, count: number): Promise<Footprint> {
  const dir = join(root, `million-${store}`)
  mkdirSync(dir, { recursive: true })
  process.stderr.write(`bench: ${count.toLocaleString('en-US')} plants into ${store}\n`)
  const server = await startServer(spec, dir)
  const out: Footprint = { store }
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
    }
  } finally {
    await stop(server.child)
  }
  const db = join(dir, 'plants.db')
  if (existsSync(db)) {
    // Counted, not assumed: a fill that lost creates must not pass for a full one.
    const reader = new Database(db, { readonly: true })
    try {
      out.rows = Number(reader.prepare('SELECT count(*) AS n FROM plants').pluck().get())
    } finally {
      reader.close()
    }
  }
  return out
}
