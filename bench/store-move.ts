/**
 * `npm run bench:move` (builds first): a SQLite store of BENCH_MOVE_PLANTS plants (1,000,000
 * by default, ids spread over the whole int64 range) moved to a throwaway PostgreSQL cluster
 * with `npm run store -- copy`, while a service on the SQLite file goes on creating. Then an
 * instance serves the PostgreSQL database, and every plant is read back through it and
 * compared with the SQLite file: each plant created before the copy began must be there,
 * exact, and nothing else but plants the source had. Prints the copy's time and its report.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { openDatabase } from '../src/store/sqlite/open.ts'
import { freePort } from '../test/helpers/free-port.ts'
import { startPostgres } from '../test/helpers/postgres-cluster.ts'
import { ROOT } from './scenarios.ts'

const PLANTS = Number(process.env.BENCH_MOVE_PLANTS ?? 1_000_000)
const TOKEN = randomBytes(24).toString('base64url')
// The load's ids are below LOAD_IDS; the prefilled plants' ids are not.
const LOAD_IDS = 2n ** 32n
const LOAD_CLIENTS = 4
const NODE = process.execPath

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

async function service (env: Record<string, string>): Promise<{ url: string, child: ChildProcess }> {
  const port = await freePort()
  const child = spawn(NODE, [join(ROOT, 'dist/src/server.js')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), API_TOKENS: TOKEN, LOG_LEVEL: 'warn', RATE_LIMIT_PER_TOKEN: '0', ...env },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (await fetch(`${url}/health/ready`).then((res) => res.ok, () => false)) return { url, child }
    if (i > 600) throw new Error('the service did not start')
    await sleep(100)
  }
}

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }

/** Creates plants (ids below LOAD_IDS) until stopped; `acked` gets each id answered 200, in order. */
function createLoad (url: string, acked: bigint[]): { stop: () => Promise<void> } {
  const stopped = new AbortController()
  const clients = Array.from({ length: LOAD_CLIENTS }, async (_, client) => {
    for (let id = BigInt(client + 1); !stopped.signal.aborted; id += BigInt(LOAD_CLIENTS)) {
      const res = await fetch(`${url}/plants`, { method: 'POST', headers: auth, body: `{"id":${id},"name":"live ${id}"}` })
      await res.arrayBuffer()
      if (res.status === 200) acked.push(id)
    }
  })
  return {
    stop: async () => {
      stopped.abort()
      await Promise.all(clients)
    }
  }
}

/** Every plant a service holds, ascending by id, a page at a time; ids read exactly. */
async function * served (url: string): AsyncGenerator<Plant[]> {
  for (let after: bigint | undefined; ;) {
    const res = await fetch(`${url}/plants?limit=1000${after === undefined ? '' : `&after=${after}`}`, { headers: auth })
    const page = JSON.parse(await res.text(), (key, value, context?: { source?: string }) =>
      key === 'id' && typeof value === 'number' ? BigInt(context!.source!) : value) as Plant[]
    if (page.length === 0) return
    yield page
    after = page.at(-1)!.id
  }
}

async function main (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-move-'))
  const teardowns: Array<() => Promise<void>> = []
  const children: ChildProcess[] = []
  try {
    const source = join(dir, 'plants.db')
    let started = performance.now()
    prefill(source)
    console.log(`prefilled ${PLANTS.toLocaleString('en')} plants in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    const postgres = await startPostgres({ teardown: (fn) => { teardowns.push(fn) } })
    const destination = await postgres.createDatabase('moved')

    const old = await service({ DATABASE_URL: `sqlite:${source}` })
    children.push(old.child)
    const acked: bigint[] = []
    const load = createLoad(old.url, acked)
    await sleep(2000)
    const ackedBefore = new Set(acked)
    started = performance.now()
    const copy = spawn(NODE, [join(ROOT, 'dist/scripts/store/main.js'), 'copy', `sqlite:${source}`, destination], { stdio: ['ignore', 'pipe', 'inherit'] })
    let report = ''
    copy.stdout.setEncoding('utf8').on('data', (chunk: string) => { report += chunk })
    const [code] = await once(copy, 'exit')
    const seconds = (performance.now() - started) / 1000
    const during = acked.length - ackedBefore.size
    await load.stop()
    old.child.kill('SIGTERM')
    await once(old.child, 'exit')
    if (code !== 0) throw new Error(`the copy exited ${code}`)
    console.log(`${report}copy: ${seconds.toFixed(1)} s (${Math.round(PLANTS / seconds).toLocaleString('en')} plants/s), ` +
      `the service acknowledged ${ackedBefore.size} creates before it began and ${during} while it ran`)

    const moved = await service({ DATABASE_URL: destination })
    children.push(moved.child)
    started = performance.now()
    const db = new Database(source, { readonly: true })
    db.defaultSafeIntegers(true)
    const rows = db.prepare<[], { id: bigint, name: string, tag: string | null }>('SELECT id, name, tag FROM plants ORDER BY id').iterate()
    let checked = 0
    let missing = 0
    let wrong = 0
    let next = rows.next()
    for await (const page of served(moved.url)) {
      for (const plant of page) {
        // Source plants before this one: only the load's, created after the copy began, may be absent.
        for (; !next.done! && next.value.id < plant.id; next = rows.next()) if (next.value.id >= LOAD_IDS || ackedBefore.has(next.value.id)) missing++
        const row = next.done! ? undefined : next.value
        if (row?.id !== plant.id || row.name !== plant.name || (row.tag ?? undefined) !== plant.tag) wrong++
        else next = rows.next()
        checked++
      }
    }
    for (; !next.done!; next = rows.next()) if (next.value.id >= LOAD_IDS || ackedBefore.has(next.value.id)) missing++
    db.close()
    console.log(`served from PostgreSQL: ${checked.toLocaleString('en')} plants read through GET /plants in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
      `${missing} missing, ${wrong} not the source's exactly`)
    if (missing + wrong > 0) process.exitCode = 1
  } finally {
    for (const child of children) child.kill('SIGKILL')
    for (const teardown of teardowns) await teardown()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
