import Database from 'better-sqlite3'
import t from 'tap'
import { migrate } from '../../src/store/sqlite/schema.ts'
import { TOKEN } from '../helpers/app.ts'
import { startServer, type RunningServer } from '../helpers/server.ts'

// A subscription whose receiver has been down a while holds a large backlog; deleting it
// must not stall the service: the subscription goes at once, its deliveries a bounded
// chunk per statement, each its own turn of the event loop.

const BACKLOG = 231_000
const WEBHOOK = `wh_${'d'.repeat(32)}`
const DAY_MS = 24 * 60 * 60 * 1000

/** A plants file holding one subscription and `count` pending deliveries of it, due in a day: none is attempted during the test. */
function seed (path: string, count: number): void {
  const db = new Database(path)
  try {
    db.pragma('journal_mode = WAL')
    migrate(db)
    const now = Date.now()
    db.prepare('INSERT INTO webhooks (id, url, secret, created_at) VALUES (?, ?, ?, ?)')
      .run(WEBHOOK, 'http://127.0.0.1:9/', `whsec_${Buffer.alloc(32, 7).toString('base64')}`, now)
    db.prepare(`WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
      INSERT INTO webhook_deliveries (id, webhook_id, plant_id, payload, attempts, next_attempt_at, created_at)
      SELECT 'msg_' || printf('%012x', ? + i) || lower(hex(randomblob(10))), ?, i,
        CAST('{"id":' || i || ',"name":"Monstera deliciosa","tag":"tropical"}' AS BLOB), 12, ?, ? FROM n`)
      .run(count, now, WEBHOOK, now + DAY_MS, now)
  } finally {
    db.close()
  }
}

/** The worst latency of GET /health, called one after another until `until` says stop; every answer must be a 200. */
async function healthWorst (server: RunningServer, until: (calls: number) => boolean): Promise<{ worst: number, calls: number, statuses: Set<number> }> {
  let worst = 0
  let calls = 0
  const statuses = new Set<number>()
  while (!until(calls)) {
    const { statusCode, ms } = await server.request('GET', '/health', { token: null })
    statuses.add(statusCode)
    worst = Math.max(worst, ms)
    calls++
  }
  return { worst, calls, statuses }
}

t.test(`DELETE /webhooks/{id} with ${BACKLOG} pending deliveries: 204 at once, /health never stalls, every delivery deleted`, async (t) => {
  const path = `${t.testdir()}/plants.db`
  seed(path, BACKLOG)
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${path}`, WEBHOOK_ALLOW_PRIVATE: 'true' })
  // Read in this process through the index: one seek, never a count of the backlog.
  const reader = new Database(path, { readonly: true })
  t.teardown(() => reader.close())
  const left = reader.prepare<[string], { one: number }>('SELECT 1 AS one FROM webhook_deliveries WHERE webhook_id = ? LIMIT 1')
  t.ok(left.get(WEBHOOK), 'the backlog is there')

  await healthWorst(server, (calls) => calls === 50) // warm-up: connections, JIT
  // As long as the delete takes, about: a busy machine's hiccups show in both.
  const idleUntil = performance.now() + 2000
  const idle = await healthWorst(server, () => performance.now() > idleUntil)

  let deleted = false
  let checks = 0
  const during = healthWorst(server, () => {
    // Every 20th call looks whether any of the backlog is left.
    if (++checks % 20 === 0) deleted = left.get(WEBHOOK) === undefined
    return deleted
  })
  const started = performance.now()
  const res = await server.request('DELETE', `/webhooks/${WEBHOOK}`)
  t.equal(res.statusCode, 204, 'deleted')
  t.equal((await server.request('GET', `/webhooks/${WEBHOOK}`)).statusCode, 404, 'gone at once for every reader')
  const timer = setTimeout(() => { deleted = true }, 30_000)
  const { worst, calls, statuses } = await during
  clearTimeout(timer)
  const tookMs = Math.round(performance.now() - started)

  t.equal(left.get(WEBHOOK), undefined, `every delivery deleted (within ${tookMs} ms)`)
  t.same([...statuses], [200], `/health answered 200 each of ${calls} times`)
  // The idle worst on this machine, times ten, with room for a WAL checkpoint, and never a
  // second: the one DELETE of the whole backlog held the loop for seconds.
  const bound = Math.min(10 * idle.worst + 50, 1000)
  t.ok(worst < bound, `/health's worst latency while deleting, ${worst.toFixed(1)} ms, stays below ${bound.toFixed(1)} ms (10 × the idle worst, ${idle.worst.toFixed(1)} ms, + 50, at most 1 s)`)
  t.equal((await server.request('DELETE', `/webhooks/${WEBHOOK}`)).statusCode, 404, 'deleted once')
})
