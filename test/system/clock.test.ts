import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { startServer, waitForLine, type RunningServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'
import { subscribe } from '../helpers/webhook-client.ts'

// A machine's clock is set back (an NTP correction, a VM restored from a snapshot, an
// operator): the service's wall clock jumps while its monotonic clock runs on. Debian's
// libfaketime, preloaded into the service, sets back only the wall clock, while it runs:
// the offset is read from a file at every reading of the clock.
const FAKETIME = readdirSync('/usr/lib')
  .map((dir) => `/usr/lib/${dir}/faketime/libfaketimeMT.so.1`)
  .find((path) => existsSync(path))
const HOUR_S = 3600

interface ClockedServer extends RunningServer {
  /** Sets the service's wall clock this many seconds from the real time. */
  setClock: (offsetSeconds: number) => void
}

async function clockedServer (t: Test, env: NodeJS.ProcessEnv): Promise<ClockedServer> {
  const offsetFile = join(t.testdir(), 'clock-offset')
  const setClock = (offsetSeconds: number): void => writeFileSync(offsetFile, `${offsetSeconds >= 0 ? '+' : ''}${offsetSeconds}\n`)
  setClock(0)
  const server = await startServer(t, {
    API_TOKENS: TOKEN,
    LD_PRELOAD: FAKETIME,
    FAKETIME_TIMESTAMP_FILE: offsetFile,
    FAKETIME_NO_CACHE: '1',
    DONT_FAKE_MONOTONIC: '1',
    ...env
  })
  return { ...server, setClock }
}

/**
 * Whether the service's clock is `offsetSeconds` from the test's, as its Date header
 * says (to the second it holds); Node writes the header from the clock once a second.
 */
async function clockIs (server: RunningServer, offsetSeconds: number): Promise<boolean> {
  const off = async (): Promise<number> => {
    const res = await server.request('GET', '/health', { token: null })
    return Math.abs(Date.parse(res.headers.date) - (Date.now() + offsetSeconds * 1000))
  }
  return (await retryUntil(off, (ms) => ms < 2000, 3000)).value < 2000
}

const skip = FAKETIME === undefined ? 'libfaketime not found (Debian\'s libfaketime package): this test sets a running service\'s clock back' : false

t.test('a clock set back an hour keeps no token refused and no address locked out for that hour', { skip }, async (t) => {
  const server = await clockedServer(t, { RATE_LIMIT_PER_TOKEN: '5', AUTH_FAILURE_LIMIT: '3' })
  const read = async (token?: string): Promise<{ status: number, reset: number, retryAfter: number }> => {
    const res = await server.request('GET', '/plants', token === undefined ? {} : { token })
    return { status: res.statusCode, reset: Number(res.headers['ratelimit-reset']), retryAfter: Number(res.headers['retry-after']) }
  }
  // At once, so that they all fall within the token's second however slow the machine.
  const budget = await Promise.all(Array.from({ length: 6 }, async () => (await read()).status))
  t.same(budget.sort(), [200, 200, 200, 200, 200, 429], 'the token has spent its 5 requests of this second')

  server.setClock(-HOUR_S)
  t.ok(await clockIs(server, -HOUR_S), 'the service\'s clock is an hour behind')
  const { value: again } = await retryUntil(read, (answer) => answer.status === 200, 3000)
  t.equal(again.status, 200, 'the token is served again once its second is over')
  t.ok(again.reset <= 1, `its window ends within a second (RateLimit-Reset: ${again.reset})`)

  const wrong = 'w'.repeat(32)
  const guesses = []
  for (let i = 0; i < 4; i++) guesses.push((await read(wrong)).status)
  t.same(guesses, [401, 401, 401, 429], 'the address is locked out after 3 wrong tokens')
  server.setClock(-2 * HOUR_S)
  t.ok(await clockIs(server, -2 * HOUR_S), 'the service\'s clock is set back another hour')
  const locked = await read(wrong)
  t.equal(locked.status, 429, 'still locked out')
  t.ok(locked.retryAfter >= 1 && locked.retryAfter <= 60, `for at most the minute it was locked out for (Retry-After: ${locked.retryAfter})`)
})

t.test('a clock set back an hour does not pause a webhook receiver for that hour', { skip }, async (t) => {
  const server = await clockedServer(t, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_TIMEOUT_MS: '1000' })
  const receiver = await startReceiver(t, () => 503)
  await subscribe(t, server, receiver.url)
  // Ten failed attempts in a row pause the receiver for 100 ms, then probe it.
  for (let id = 1; id <= 12; id++) t.equal((await server.request('POST', '/plants', { body: { id, name: `Fern ${id}` } })).statusCode, 200)
  await waitForLine(server.stdout, /webhook receiver keeps failing/)

  server.setClock(-HOUR_S)
  t.ok(await clockIs(server, -HOUR_S), 'the service\'s clock is an hour behind')
  // The failed deliveries were scheduled for retries on the wall clock, now an hour
  // ahead (the stores keep those times); a plant created now is due now. Only its
  // delivery is taken: one claimed before the clock went back would also end the pause.
  const fresh = (body: string): boolean => body.includes('"name":"Fern 13"')
  receiver.answer((_n, { body }) => fresh(body) ? 200 : 503)
  t.equal((await server.request('POST', '/plants', { body: { id: 13, name: 'Fern 13' } })).statusCode, 200)
  const { value: delivered } = await retryUntil(async () => receiver.received.some((r) => r.status === 200 && fresh(r.body)), (done) => done, 5000, 20)
  t.ok(delivered, 'the new plant is delivered within seconds: the pause ended on time')
  await waitForLine(server.stdout, /webhook receiver answers again/)
})
