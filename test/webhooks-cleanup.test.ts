import Database from 'better-sqlite3'
import pino from 'pino'
import t from 'tap'
import { migrate } from '../src/store/sqlite/schema.ts'
import { SqliteStore } from '../src/store/sqlite/store.ts'
import type { WebhookStore } from '../src/store/webhooks.ts'
import { RETENTION_MS } from '../src/webhooks/dispatch-policy.ts'
import { CLEANUP_CHUNK, OutboxCleanup } from '../src/webhooks/outbox-cleanup.ts'
import { retryUntil } from './helpers/wait.ts'

// The outbox is cleaned up a bounded chunk per statement, however much there is to delete
// (test/system/webhooks-cleanup.test.ts measures what that spares the event loop).

const LIVE = `wh_${'a'.repeat(32)}`
const GONE = `wh_${'b'.repeat(32)}`
const ROWS = 2 * CLEANUP_CHUNK + 100
const log = pino({ level: 'silent' })

/**
 * A file with one subscription (LIVE) holding ROWS deliveries settled before the retention
 * and one pending, and ROWS pending deliveries of a subscription deleted (GONE).
 */
function seeded (dir: string): SqliteStore {
  const path = `${dir}/plants.db`
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  migrate(db)
  db.prepare("INSERT INTO webhooks (id, url, secret, created_at) VALUES (?, 'http://127.0.0.1:9/', 'whsec_AAAA', 0)").run(LIVE)
  const insert = db.prepare(`WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO webhook_deliveries (id, webhook_id, plant_id, payload, status, next_attempt_at, created_at, settled_at)
    SELECT 'msg_' || printf('%012x', ? + i) || lower(hex(randomblob(10))), ?, i, x'7b7d', ?, ?, 0, ? FROM n`)
  const old = Date.now() - RETENTION_MS - 60_000
  insert.run(ROWS, 0, LIVE, 'failed', null, old)
  insert.run(1, ROWS, LIVE, 'pending', Date.now() + 60_000, null)
  insert.run(ROWS, 2 * ROWS, GONE, 'pending', Date.now() + 60_000, null)
  db.close()
  return new SqliteStore(path, { log, maxBatch: 100, maxQueueBytes: 1 << 20, onBatch: () => {} })
}

function count (dir: string, where: string): number {
  const db = new Database(`${dir}/plants.db`, { readonly: true })
  try {
    return Number(db.prepare<[], { n: bigint }>(`SELECT count(*) AS n FROM webhook_deliveries WHERE ${where}`).get()!.n)
  } finally {
    db.close()
  }
}

t.test('SQLite: prune and sweep each delete at most a chunk per call, and only what they should', async (t) => {
  const dir = t.testdir()
  const store = seeded(dir)
  t.teardown(async () => await store.close())
  const cutoff = new Date(Date.now() - RETENTION_MS)
  t.equal(await store.webhooks.prune(cutoff, CLEANUP_CHUNK), CLEANUP_CHUNK, 'prune: one chunk')
  t.equal(await store.webhooks.sweep(CLEANUP_CHUNK), CLEANUP_CHUNK, 'sweep: one chunk')
  t.equal(count(dir, `webhook_id = '${LIVE}' AND status = 'failed'`), ROWS - CLEANUP_CHUNK, 'the rest of the settled ones left for the next chunks')
  t.equal(count(dir, `webhook_id = '${GONE}'`), ROWS - CLEANUP_CHUNK, 'the rest of the orphans too')
  t.equal(await store.webhooks.prune(cutoff, ROWS), ROWS - CLEANUP_CHUNK)
  t.equal(await store.webhooks.sweep(ROWS), ROWS - CLEANUP_CHUNK)
  t.equal(await store.webhooks.sweep(ROWS), 0, 'nothing left to sweep')
  t.equal(count(dir, `webhook_id = '${LIVE}' AND status = 'pending'`), 1, 'a live subscription\'s pending delivery stays')
})

t.test('OutboxCleanup deletes everything due, a chunk per statement, from its start', async (t) => {
  const dir = t.testdir()
  const store = seeded(dir)
  t.teardown(async () => await store.close())
  const deleted: number[] = []
  const counted = (run: () => Promise<number>): Promise<number> => run().then((n) => { deleted.push(n); return n })
  // All the cleanup calls.
  const webhooks = {
    erase: async (limit: number) => await store.webhooks.erase(limit),
    sweep: async (limit: number) => await counted(async () => await store.webhooks.sweep(limit)),
    prune: async (before: Date, limit: number) => await counted(async () => await store.webhooks.prune(before, limit)),
    pruneEvents: async (before: Date, after: number, limit: number) => await store.webhooks.pruneEvents(before, after, limit)
  } as unknown as WebhookStore
  const cleanup = new OutboxCleanup(webhooks, log)
  cleanup.start()
  t.teardown(async () => await cleanup.close())
  const total = async (): Promise<number> => deleted.reduce((a, b) => a + b, 0)
  t.equal((await retryUntil(total, (n) => n === 2 * ROWS, 5000, 20)).value, 2 * ROWS, 'the orphans and the settled ones deleted')
  t.equal(count(dir, '1'), 1, 'only the live pending delivery is left')
  t.ok(deleted.every((n) => n <= CLEANUP_CHUNK), `no statement deleted more than ${CLEANUP_CHUNK}: ${deleted.join(', ')}`)
})

t.test('OutboxCleanup: a failed cleanup is logged and tried at the next wake; a wake while one runs runs it once more after', async (t) => {
  let sweeps = 0
  let down = true
  const logged: string[] = []
  const webhooks = {
    erase: async () => false,
    sweep: async () => {
      sweeps++
      if (down) throw new Error('the store is down')
      return 0
    },
    prune: async () => 0,
    pruneEvents: async () => undefined,
    pruneKeys: async () => 0
  } as unknown as WebhookStore
  const cleanup = new OutboxCleanup(webhooks, { debug: (_: unknown, msg: string) => logged.push(msg) } as unknown as typeof log)
  t.teardown(async () => await cleanup.close())
  cleanup.start()
  await retryUntil(async () => logged.length, (n) => n === 1, 1000, 5)
  t.same([sweeps, logged], [1, ['webhooks: cannot clean up the outbox; trying again later']], 'logged, not thrown')
  down = false
  cleanup.wake()
  cleanup.wake()
  await retryUntil(async () => sweeps, (n) => n === 3, 1000, 5)
  await cleanup.close()
  t.equal(sweeps, 3, 'run again, then once more for the wake that came meanwhile')
  cleanup.wake()
  t.equal(sweeps, 3, 'nothing runs once closed')
})
