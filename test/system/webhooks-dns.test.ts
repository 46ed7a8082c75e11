import { spawnSync } from 'node:child_process'
import fc from 'fast-check'
import t from 'tap'
import { isPublic } from '../../src/webhooks/address-policy.ts'
import { TOKEN } from '../helpers/app.ts'
import { canonicalAddress, startDnsServer } from '../helpers/dns-server.ts'
import { errorShapeProblem } from '../helpers/error-shape.ts'
import { fuzzSettings, propertyHolds } from '../helpers/fuzz.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { logsArrived, startServer, waitForLine } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'
import { deliveryLog, subscribe } from '../helpers/webhook-client.ts'

// Webhook host names resolved through a real name server (test/helpers/dns-server.ts),
// the service in a mount namespace of its own whose /etc/resolv.conf names it. What a
// receiver's name server does is a peer's answer: it may hold up that receiver's
// deliveries, never another's.

const { seed, numRuns } = fuzzSettings(100)

const RESOLVES_NOT_PUBLIC = 'the host resolves to an address that is not public; webhooks go to public addresses only'

// The name server binds port 53 and the service needs a mount namespace: root's, as in CI.
const unshare = spawnSync('unshare', ['--mount', 'true'], { encoding: 'utf8' })
const skip = process.getuid?.() !== 0
  ? 'not root: this test runs a name server on port 53 and the service in a mount namespace'
  : unshare.status !== 0 ? `unshare --mount fails (${unshare.error?.message ?? unshare.stderr.trim()}): the service needs a mount namespace of its own` : false

t.test('a receiver whose name server stops answering holds up only its own deliveries', { skip }, async (t) => {
  const dns = await startDnsServer(t)
  for (const name of ['good.test', 'dark.test', 'later.test']) dns.names.set(name, ['127.0.0.1'])
  const good = await startReceiver(t)
  const dark = await startReceiver(t)
  const server = await startServer(t, {
    API_TOKENS: TOKEN,
    DATABASE_URL: `sqlite:${t.testdir()}/plants.db`,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_BASE_MS: '100'
  }, { resolvConf: dns.resolvConf })
  const named = (url: string, host: string): string => url.replace('127.0.0.1', host)
  const goodSubscription = await subscribe(t, server, named(good.url, 'good.test'))
  const darkSubscription = await subscribe(t, server, named(dark.url, 'dark.test'))

  // No delivery has been made yet, so no connection is open: every attempt resolves.
  dns.silent.add('dark.test')
  const plants = 20
  const creates = await Promise.all(Array.from({ length: plants }, async (_, i) =>
    await server.request('POST', '/plants', { body: { id: i + 1, name: `plant ${i + 1}` } })))
  t.same(creates.map((res) => res.statusCode), Array(plants).fill(200), 'every create answered 200')

  // Subscribing resolves too, while the dark name's lookups are under way.
  const later = await server.request('POST', '/webhooks', { body: { url: named(good.url, 'later.test') } })
  t.equal(later.statusCode, 201, `another name is resolved meanwhile: ${later.body}`)

  await good.waitFor(plants, 20_000)
  // Each attempt is recorded once its answer is in, in the next commit.
  const { value: goodLog } = await retryUntil(async () => await deliveryLog(server, goodSubscription.id),
    (log) => log.every((d) => d.status !== 'pending'), 5000, 50)
  t.same(goodLog.map((d) => [d.status, d.attempts, d.lastError]), Array(plants).fill(['delivered', 1, undefined]),
    'the other receiver got every delivery at its first attempt')

  const { value: darkLog } = await retryUntil(async () => await deliveryLog(server, darkSubscription.id),
    (log) => log.some((d) => d.attempts > 0), 20_000, 100)
  const darkErrors = new Set(darkLog.filter((d) => d.attempts > 0).map((d) => d.lastError))
  t.same([...darkErrors].filter((error) => error !== 'the host did not resolve in time'), [],
    `the dark receiver's attempts failed, saying why: ${[...darkErrors].join('; ')}`)
  t.equal(dark.received.length, 0, 'nothing reached it')

  // Its name server back, nothing was lost.
  dns.silent.delete('dark.test')
  await dark.waitFor(plants, 30_000)
  const { value: after } = await retryUntil(async () => await deliveryLog(server, darkSubscription.id),
    (log) => log.every((d) => d.status === 'delivered'), 10_000, 100)
  t.same(after.map((d) => d.status), Array(plants).fill('delivered'), 'every delivery to it delivered once its name resolved again')
})

const special = fc.constantFrom('127.0.0.1', '10.1.2.3', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1',
  '::ffff:127.0.0.1', 'fc00::1', '64:ff9b::a00:1', '93.184.216.34', '8.8.8.8', '2606:4700:4700::1111')
// A name's addresses, of both families; undefined: the name does not exist.
const answers = fc.option(fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), special), { maxLength: 6 }), { nil: undefined })

t.test('property: a name is taken only when every address its name server gives, of either family, is public', { skip }, async (t) => {
  const dns = await startDnsServer(t)
  const server = await startServer(t, { API_TOKENS: TOKEN }, { resolvConf: dns.resolvConf })
  let n = 0
  // Refused names and the addresses any one of which the log must name.
  const refusals: Array<[string, string[]]> = []
  await propertyHolds(t, fc.asyncProperty(answers, async (addresses) => {
    // A new name every time: nothing answered before is remembered.
    const name = `n${n++}.test`
    if (addresses !== undefined) dns.names.set(name, addresses)
    const res = await server.request('POST', '/webhooks', { body: { url: `https://${name}/hook` } })
    const refusedFor = addresses?.filter((address) => !isPublic(address)).map(canonicalAddress) ?? []
    if (addresses !== undefined && addresses.length > 0 && refusedFor.length === 0) {
      if (res.statusCode !== 201) throw new Error(`${addresses.join(' ')}: ${res.statusCode} ${res.body}`)
      // At most 20 subscriptions at once.
      const deleted = await server.request('DELETE', `/webhooks/${res.json().id as string}`)
      if (deleted.statusCode !== 204) throw new Error(`DELETE: ${deleted.statusCode}`)
      return
    }
    const problem = errorShapeProblem(res.statusCode, res.headers['content-type'] ?? '', res.body)
    const { code, message } = res.json()
    if (res.statusCode !== 400 || problem !== undefined || code !== 'webhook_url_refused') {
      throw new Error(`${addresses?.join(' ') ?? 'NXDOMAIN'}: ${res.statusCode} ${problem ?? ''} ${res.body}`)
    }
    // The kind of problem only: what the name server answered is not the client's to learn.
    const expected = addresses === undefined || addresses.length === 0 ? 'the host does not resolve' : RESOLVES_NOT_PUBLIC
    if (message !== expected) throw new Error(`${addresses?.join(' ') ?? 'NXDOMAIN'}: ${message as string}`)
    if (addresses !== undefined && addresses.length > 0) refusals.push([name, refusedFor])
  }), seed, numRuns)
  await logsArrived(server)
  const details = server.stdout.filter((line) => /"level":40.*webhook subscription refused/.test(line)).map((line) => JSON.parse(line).detail as string)
  for (const [name, refusedFor] of refusals) {
    const detail = details.find((detail) => detail.startsWith(`${name} resolves to `))
    if (detail === undefined || !refusedFor.includes(canonicalAddress(detail.slice(`${name} resolves to `.length)))) {
      t.fail(`the log names no address of ${name} that is not public (${refusedFor.join(' ')}): ${detail}`)
    }
  }
})

t.test('a refusal or a failed delivery says which kind of problem, never the addresses a name has; the warn log line has them', { skip }, async (t) => {
  const dns = await startDnsServer(t)
  dns.names.set('internal.test', ['10.20.30.40'])
  // Public when subscribing; by the time of the attempt, private (rebinding): refused before connecting.
  dns.names.set('rebind.test', ['93.184.216.34'])
  const server = await startServer(t, { API_TOKENS: TOKEN, WEBHOOK_RETRY_BASE_MS: '3600000' }, { resolvConf: dns.resolvConf })

  const internal = await server.request('POST', '/webhooks', { body: { url: 'https://internal.test/' } })
  t.equal(internal.statusCode, 400)
  t.match(internal.json(), { code: 'webhook_url_refused', message: RESOLVES_NOT_PUBLIC })
  t.notMatch(internal.body, /10\.20\.30\.40/, 'the answer does not name the address')
  const missing = await server.request('POST', '/webhooks', { body: { url: 'https://missing.test/' } })
  t.match(missing.json(), { code: 'webhook_url_refused', message: 'the host does not resolve' })
  t.notMatch(missing.body, /ENOTFOUND|NXDOMAIN/, 'nor what the name server answered')
  const refusedLine = JSON.parse(await waitForLine(server.stdout, /"level":40.*webhook subscription refused/))
  t.match(refusedLine, { detail: 'internal.test resolves to 10.20.30.40', reqId: String }, 'the log names it, with the request')
  t.match(JSON.parse(await waitForLine(server.stdout, /"level":40.*missing\.test/)), { detail: 'missing.test does not resolve (ENOTFOUND)' })

  const subscription = await subscribe(t, server, 'https://rebind.test/hook')
  dns.names.set('rebind.test', ['10.20.30.41'])
  t.equal((await server.request('POST', '/plants', { body: { id: 1, name: 'Fern' } })).statusCode, 200)
  const { value: [delivery] } = await retryUntil(async () => await deliveryLog(server, subscription.id), (log) => log[0]?.attempts === 1, 10_000, 50)
  t.equal(delivery.lastError, RESOLVES_NOT_PUBLIC, 'the delivery log says which kind of problem')
  const attemptLine = JSON.parse(await waitForLine(server.stdout, new RegExp(`"level":40.*"webhook":"${subscription.id}".*webhook attempt failed`)))
  t.match(attemptLine, { webhook: subscription.id, error: RESOLVES_NOT_PUBLIC, detail: 'rebind.test resolves to 10.20.30.41' }, 'the log names the address, with the webhook')
})
