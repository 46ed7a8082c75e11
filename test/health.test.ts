import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { assertError, testApp } from './helpers/app.ts'

t.test('GET /health answers without a token and without touching the store', async (t) => {
  const app = await testApp(t)
  const res = await app.inject({ url: '/health' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok' })
})

t.test('GET /health/ready answers ready when the store answers, without a token', async (t) => {
  const app = await testApp(t, { DATABASE_URL: `sqlite:${t.testdir()}/plants.db` })
  const res = await app.inject({ url: '/health/ready' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ready' })
})

t.test('GET /health/ready answers 503 when a check fails or is too slow', async (t) => {
  const failing = await testApp(t)
  failing.readiness.add('disk', async () => { throw new Error('no space left') })
  const message = assertError(t, await failing.inject({ url: '/health/ready' }), 503)
  t.equal(message, 'not ready: the disk is unavailable', 'the cause stays in the log')

  const slow = await testApp(t)
  slow.readiness.add('network', async () => { await sleep(3000) })
  const started = Date.now()
  t.equal(assertError(t, await slow.inject({ url: '/health/ready' }), 503), 'not ready: the network is unavailable')
  t.ok(Date.now() - started < 2500, 'answered after the timeout, not after the check')
})

t.test('both health routes are in the document, without security', async (t) => {
  const app = await testApp(t)
  const doc = (await app.inject({ url: '/docs/json' })).json()
  for (const path of ['/health', '/health/ready']) {
    t.same(doc.paths[path].get.security, [], `${path} needs no token`)
    t.ok(doc.paths[path].get.responses['503'], `${path} declares 503`)
  }
})
