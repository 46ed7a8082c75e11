import { spawnSync } from 'node:child_process'
import fc from 'fast-check'
import t from 'tap'
import { isPublic } from '../../src/webhooks/address-policy.ts'
import { TOKEN } from '../helpers/app.ts'
import { canonicalAddress, startDnsServer } from '../helpers/dns-server.ts'
import { errorShapeProblem } from '../helpers/error-shape.ts'
import { fuzzSettings, propertyHolds } from '../helpers/fuzz.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { startServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'
import { deliveryLog, subscribe } from '../helpers/webhook-client.ts'

// Webhook host names resolved through a real name server (test/helpers/dns-server.ts),
// the service in a mount namespace of its own whose /etc/resolv.conf names it. What a
// receiver's name server does is a peer's answer: it may hold up that receiver's
// deliveries, never another's.

const { seed, numRuns } = fuzzSettings(100)

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
  t.same([...darkErrors].filter((error) => !/^dark\.test (does not resolve \(ETIMEOUT\)|did not resolve within 5000 ms)$/.test(String(error))), [],
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
    if (addresses === undefined) {
      if (message !== `${name} does not resolve (ENOTFOUND)`) throw new Error(`NXDOMAIN: ${message as string}`)
    } else if (addresses.length === 0) {
      if (message !== `${name} has no address`) throw new Error(`no records: ${message as string}`)
    } else {
      const named = new RegExp(`^${name.replaceAll('.', '\\.')} \\((.+)\\) is not a public address`).exec(message)
      if (named === null || !refusedFor.includes(canonicalAddress(named[1]))) throw new Error(`${addresses.join(' ')}: ${message as string}`)
    }
  }), seed, numRuns)
})
