import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { createLoad } from '../helpers/create-load.ts'
import { startServer } from '../helpers/server.ts'
import { reported, storeCommand } from '../helpers/store-command.ts'
import { retryUntil } from '../helpers/wait.ts'
import { webhookId } from '../helpers/webhook-client.ts'

// `npm run store -- backup` while the service takes creates, then `restore` into a new
// service: every plant acknowledged before the backup began is there, readers get 410 for
// cursors of the replaced history, and the subscriber is not sent again what it had.

const ENV = { API_TOKENS: TOKEN, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '50', RATE_LIMIT_PER_TOKEN: '0' }

t.test('a backup during a create load, restored into a new service: every plant acknowledged before it began, 410 past it, nothing delivered twice', async (t) => {
  const dir = t.testdir()
  const path = `${dir}/data/plants.db`
  const env = { ...ENV, DATABASE_URL: `sqlite:${path}` }
  // Receivers fail at first: the deliveries stay pending, in the backup too.
  const receiver = await startReceiver(t, () => 503)
  const first = await startServer(t, env)
  const subscription = await first.request('POST', '/webhooks', { body: { url: receiver.url } })
  t.equal(subscription.statusCode, 201)
  const token = `${path}.token`
  writeFileSync(token, 'a development token\n', { mode: 0o600 })
  const tokenFile = statSync(token)

  const load = createLoad(first)
  await retryUntil(async () => load.acked.length, (n) => n >= 300, 30_000, 10)
  const ackedBefore = [...load.acked]
  const backup = await storeCommand(['backup', `${dir}/backup.db`], { DATABASE_URL: `sqlite:${path}` })
  const ackedDuring = load.acked.length - ackedBefore.length
  t.equal(backup.code, 0, backup.stderr)
  t.match(backup.stdout, /^backed up .*plants\.db to .*backup\.db in [\d.]+ s: \d+ plants?, 1 subscription, \d+ pending deliver(y|ies), change feed up to seq \d+, schema version \d+, \d+ bytes; PRAGMA integrity_check: ok\n$/)
  t.ok(ackedDuring > 0, `the service went on acknowledging creates while the backup ran (${ackedDuring})`)
  const inBackup = reported(backup.stdout, 's:')
  t.ok(inBackup >= ackedBefore.length, 'the backup holds at least the plants acknowledged before it began')
  const copy = new Database(`${dir}/backup.db`, { readonly: true })
  const ids = new Set(copy.prepare('SELECT id FROM plants').pluck().all() as number[])
  t.same(ackedBefore.filter((id) => !ids.has(id)), [], 'every plant acknowledged before the backup began is in it')
  t.same(copy.pragma('integrity_check', { simple: true }), 'ok')
  const backupPending = Number(copy.prepare("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'").pluck().get())
  copy.close()
  t.notOk(existsSync(`${dir}/backup.db-wal`), 'the backup is one file')
  t.equal(statSync(`${dir}/backup.db`).mode & 0o777, 0o600, 'readable by its owner alone: it holds the webhooks\' secrets')

  // The replaced store goes on: more plants, and the receiver now takes every delivery.
  await sleep(200)
  await load.stop()
  receiver.answer(() => 200)
  const delivered = await retryUntil(async () => new Set(receiver.received.filter((r) => r.status === 200).map(webhookId)), (ok) => ok.size >= load.acked.length, 30_000)
  t.equal(delivered.value.size, load.acked.length, 'the replaced store delivered every event')
  const latest: number = (await first.request('GET', '/plants/changes?limit=1')).json().latest
  first.child.kill('SIGTERM')
  await first.exited

  const restore = await storeCommand(['restore', `${dir}/backup.db`], { DATABASE_URL: `sqlite:${path}` })
  t.equal(restore.code, 0, restore.stderr)
  t.match(restore.stdout, `the replaced file's history reached seq ${latest}; ${backupPending} deliveries pending in the backup that it had delivered are marked delivered`)
  const restarted = reported(restore.stdout, 'a new history after seq')
  t.equal(restarted, latest + 1e12, 'the history restarts a gap past the replaced file\'s latest seq')
  t.same(['-wal', '-shm', '.restoring'].filter((suffix) => existsSync(`${path}${suffix}`)), [], 'no -wal, -shm or staging file is left')
  t.equal(readFileSync(token, 'utf8'), 'a development token\n', 'the token file is left alone')
  t.equal(statSync(token).ino, tokenFile.ino)

  const received = receiver.received.length
  const second = await startServer(t, env)
  const missing = []
  for (const id of ackedBefore) {
    const res = await second.request('GET', `/plants/${id}`)
    if (res.statusCode !== 200 || res.json().name !== `plant ${id}`) missing.push(id)
  }
  t.same(missing, [], `all ${ackedBefore.length} plants acknowledged before the backup began are served`)
  for (const cursor of [latest, restarted - 1]) {
    const old = await second.request('GET', `/plants/changes?after=${cursor}`)
    t.equal(old.statusCode, 410)
    t.match(old.json().message, `the store was moved or restored: its history restarted after seq ${restarted}`)
  }
  // A new plant's delivery goes out after any older one still due: none is.
  t.equal((await second.request('POST', '/plants', { body: { id: 0, name: 'after the restore' } })).statusCode, 200)
  await receiver.waitFor(received + 1)
  await sleep(200)
  const again = receiver.received.slice(received).map(webhookId).filter((id) => delivered.value.has(id))
  t.same(again, [], 'no delivery the replaced store had delivered is sent again')
  t.equal((await second.request('GET', `/plants/changes?after=${restarted}`)).json().changes[0].seq, restarted + 1)
})
