import { isIP } from 'node:net'
import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import ipaddr from 'ipaddr.js'
import t, { type Test } from 'tap'
import type { Resolve } from '../src/webhooks/resolver.ts'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'
import { fuzzSettings } from './helpers/fuzz.ts'
import { startReceiver, type Receiver } from './helpers/receiver.ts'
import { retryUntil } from './helpers/wait.ts'

// The webhook subscription API through app.inject: subscribing (and the address policy
// that guards it against SSRF), listing, deleting, the limit, the delivery log and the
// retry endpoint. Deliveries go to a real receiver on 127.0.0.1, which needs
// WEBHOOK_ALLOW_PRIVATE=true; everything else runs under the default policy, names
// resolved through the `resolve` seam (or, for `localhost`, the system's resolver).

const { seed, numRuns } = fuzzSettings(200)

// Limits this file does not exercise: no per-token rate, no lockout after rejected
// tokens, no overload checks, so that every answer is the webhook routes' own.
const ENV = { RATE_LIMIT_PER_TOKEN: '0', AUTH_FAILURE_LIMIT: '1000000000', MAX_EVENT_LOOP_DELAY_MS: '0', MAX_HEAP_USED_PERCENT: '0' }
const PRIVATE = { ...ENV, WEBHOOK_ALLOW_PRIVATE: 'true' }

const PUBLIC_V4 = '93.184.216.34'
const PUBLIC_URL = `https://${PUBLIC_V4}/hook`
const SUBSCRIPTION_ID = /^wh_[0-9a-f]{32}$/
const DELIVERY_ID = /^msg_[0-9a-f]{32}$/
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/
const UNKNOWN_ID = `wh_${'0'.repeat(32)}`
const UNKNOWN_DELIVERY = `msg_${'0'.repeat(32)}`
const MAX_SUBSCRIPTIONS = 20
const URL_MAX_LENGTH = 2048
// Refusals say which kind of problem, never what a name resolved to (the log has it).
const NOT_PUBLIC = 'the host is not a public address; webhooks go to public addresses only'
const RESOLVES_NOT_PUBLIC = 'the host resolves to an address that is not public; webhooks go to public addresses only'
const NOT_RESOLVED = 'the host does not resolve'

interface Created { id: string, url: string, events: string[], secret: string, createdAt: string }
interface Delivery {
  id: string
  event: string
  plantId: number
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  lastStatusCode?: number
  lastError?: string
  nextAttemptAt?: string
  createdAt: string
  deliveredAt?: string
}

async function subscribe (app: FastifyInstance, url: unknown, headers: Record<string, string> = AUTH): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: JSON.stringify(url === undefined ? {} : { url })
  })
}

/** Subscribes and asserts the 201; returns the created subscription. */
async function subscribed (t: Test, app: FastifyInstance, url: string): Promise<Created> {
  const res = await subscribe(app, url)
  t.equal(res.statusCode, 201, `subscribed ${url.slice(0, 80)}: ${res.body.slice(0, 200)}`)
  return res.json()
}

/** Asserts a 400 in the Error shape; returns its message. */
function refused (t: Test, res: LightMyRequestResponse, what: string): string {
  return assertError(t, res, 400, what)
}

async function listSubscriptions (app: FastifyInstance): Promise<Array<Omit<Created, 'secret'>>> {
  const res = await app.inject({ url: '/webhooks', headers: AUTH })
  if (res.statusCode !== 200) throw new Error(`GET /webhooks answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

async function deliveries (app: FastifyInstance, id: string, query = 'limit=100'): Promise<Delivery[]> {
  const res = await app.inject({ url: `/webhooks/${id}/deliveries?${query}`, headers: AUTH })
  if (res.statusCode !== 200) throw new Error(`GET deliveries answered ${res.statusCode}: ${res.body}`)
  return res.json()
}

/** Waits until the delivery log of `id` satisfies `done`; returns it (the last one read, if it never does). */
async function logUntil (app: FastifyInstance, id: string, done: (log: Delivery[]) => boolean): Promise<Delivery[]> {
  return (await retryUntil(async () => await deliveries(app, id), done, 10_000, 20)).value
}

async function retry (app: FastifyInstance, id: string, deliveryId: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: `/webhooks/${id}/deliveries/${deliveryId}/retry`, headers: AUTH })
}

/** A resolve seam from a table of names; a name not in it does not resolve (ENOTFOUND). Records every name asked. */
function resolver (table: Record<string, Array<{ address: string, family: number }> | Error>): Resolve & { asked: string[] } {
  const asked: string[] = []
  const resolve = async (hostname: string): Promise<Array<{ address: string, family: number }>> => {
    asked.push(hostname)
    const answer = table[hostname] ?? Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    if (answer instanceof Error) throw answer
    return answer
  }
  return Object.assign(resolve, { asked })
}

// ---------------------------------------------------------------------------------
// 1. The lifecycle

t.test('a subscription is created, shown without its secret, and deleted', async (t) => {
  const app = await testApp(t, ENV)
  const before = Date.now()
  // Normalized: the scheme and host lowercased, the default port and the dot segments dropped.
  const res = await subscribe(app, `HTTPS://${PUBLIC_V4}:443/a/../hook`)
  const after = Date.now()
  t.equal(res.statusCode, 201)
  t.match(res.headers['content-type'], /^application\/json/)
  const created: Created = res.json()
  t.strictSame(Object.keys(created).sort(), ['createdAt', 'events', 'id', 'pendingDeliveries', 'secret', 'status', 'url'], 'exactly the CreatedSubscription fields')
  t.match(created.id, SUBSCRIPTION_ID)
  t.equal(created.url, PUBLIC_URL, 'the url as normalized')
  t.strictSame(created.events, ['plant.created'])
  t.equal(res.headers.location, `/webhooks/${created.id}`)
  const key = SECRET.exec(created.secret)
  t.ok(key, `the secret is whsec_ and base64: ${created.secret}`)
  const bytes = Buffer.from(key?.[1] ?? '', 'base64')
  t.equal(bytes.length, 32, 'the secret is 32 bytes')
  t.equal(bytes.toString('base64'), key?.[1], 'canonical base64')
  t.equal(new Date(created.createdAt).toISOString(), created.createdAt, 'createdAt is an ISO timestamp')
  t.ok(Date.parse(created.createdAt) >= before - 1 && Date.parse(created.createdAt) <= after + 1, 'createdAt is the time of the request')

  const other = await subscribed(t, app, PUBLIC_URL)
  t.not(other.id, created.id, 'each subscription has its own id')
  t.not(other.secret, created.secret, 'and its own secret')

  const shown = { id: created.id, url: created.url, events: created.events, createdAt: created.createdAt, status: 'active', pendingDeliveries: 0 }
  const got = await app.inject({ url: res.headers.location, headers: AUTH })
  t.equal(got.statusCode, 200)
  t.strictSame(got.json(), shown, 'GET by id: the subscription without its secret')
  t.notOk(got.body.includes(created.secret.slice(6)), 'no secret in it')

  const listed = await app.inject({ url: '/webhooks', headers: AUTH })
  t.equal(listed.statusCode, 200)
  const list: Array<Record<string, unknown>> = listed.json()
  t.equal(list.length, 2)
  for (const item of list) t.strictSame(Object.keys(item).sort(), ['createdAt', 'events', 'id', 'pendingDeliveries', 'status', 'url'], 'listed without a secret')
  t.strictSame(list.find((s) => s.id === created.id), shown)
  t.strictSame(list.find((s) => s.id === other.id), { id: other.id, url: other.url, events: other.events, createdAt: other.createdAt, status: 'active', pendingDeliveries: 0 })
  for (const secret of [created.secret, other.secret]) t.notOk(listed.body.includes(secret.slice(6)), 'no secret anywhere in the list')

  const deleted = await app.inject({ method: 'DELETE', url: `/webhooks/${created.id}`, headers: AUTH })
  t.equal(deleted.statusCode, 204)
  t.equal(deleted.body, '')
  t.match(assertError(t, await app.inject({ url: `/webhooks/${created.id}`, headers: AUTH }), 404, 'GET after delete'),
    `no webhook subscription has id ${created.id}`)
  assertError(t, await app.inject({ method: 'DELETE', url: `/webhooks/${created.id}`, headers: AUTH }), 404, 'DELETE again')
  assertError(t, await app.inject({ url: `/webhooks/${created.id}/deliveries`, headers: AUTH }), 404, 'its delivery log is gone')
  assertError(t, await retry(app, created.id, UNKNOWN_DELIVERY), 404, 'retry under a deleted subscription')
  t.strictSame((await listSubscriptions(app)).map((s) => s.id), [other.id], 'only the other one is left')
  t.equal((await app.inject({ url: `/webhooks/${other.id}`, headers: AUTH })).statusCode, 200, 'the other one is untouched')
})

t.test('an unknown id answers 404 on every route', async (t) => {
  const app = await testApp(t, ENV)
  await subscribed(t, app, PUBLIC_URL)
  for (const [method, url] of [
    ['GET', `/webhooks/${UNKNOWN_ID}`],
    ['DELETE', `/webhooks/${UNKNOWN_ID}`],
    ['GET', `/webhooks/${UNKNOWN_ID}/deliveries`],
    ['POST', `/webhooks/${UNKNOWN_ID}/deliveries/${UNKNOWN_DELIVERY}/retry`]
  ] as const) {
    t.match(assertError(t, await app.inject({ method, url, headers: AUTH }), 404, `${method} ${url}`), `no webhook subscription has id ${UNKNOWN_ID}`)
  }
  t.equal((await listSubscriptions(app)).length, 1, 'nothing was deleted')
})

t.test('a malformed id answers 400 naming the parameter', async (t) => {
  const app = await testApp(t, ENV)
  const { id } = await subscribed(t, app, PUBLIC_URL)
  const badIds = ['nope', 'wh_', `wh_${'0'.repeat(31)}`, `wh_${'0'.repeat(33)}`, `wh_${'A'.repeat(32)}`, `WH_${'0'.repeat(32)}`,
    `wh_${'g'.repeat(32)}`, `${id}%20`, `msg_${'0'.repeat(32)}`]
  for (const bad of badIds) {
    for (const [method, url] of [
      ['GET', `/webhooks/${bad}`],
      ['DELETE', `/webhooks/${bad}`],
      ['GET', `/webhooks/${bad}/deliveries`],
      ['POST', `/webhooks/${bad}/deliveries/${UNKNOWN_DELIVERY}/retry`]
    ] as const) {
      t.match(assertError(t, await app.inject({ method, url, headers: AUTH }), 400, `${method} ${url}`), /^params\/id /)
    }
  }
  for (const bad of ['nope', 'msg_', `msg_${'0'.repeat(31)}`, `msg_${'F'.repeat(32)}`, `wh_${'0'.repeat(32)}`]) {
    t.match(assertError(t, await retry(app, id, bad), 400, `retry ${bad}`), /^params\/deliveryId /)
  }
  t.equal((await listSubscriptions(app)).length, 1, 'the subscription is still there')
})

t.test('every webhook route needs the token', async (t) => {
  const app = await testApp(t, ENV)
  const { id } = await subscribed(t, app, PUBLIC_URL)
  const routes = [
    ['POST', '/webhooks'],
    ['GET', '/webhooks'],
    ['GET', `/webhooks/${id}`],
    ['DELETE', `/webhooks/${id}`],
    ['GET', `/webhooks/${id}/deliveries`],
    ['POST', `/webhooks/${id}/deliveries/${UNKNOWN_DELIVERY}/retry`]
  ] as const
  for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: 'Basic dXNlcjpwYXNz' }]) {
    for (const [method, url] of routes) {
      const res = await app.inject({
        method,
        url,
        headers: { ...headers, 'content-type': 'application/json' },
        ...method === 'POST' ? { payload: JSON.stringify({ url: PUBLIC_URL }) } : {}
      })
      const what = `${method} ${url} with ${JSON.stringify(headers)}`
      assertError(t, res, 401, what)
      t.match(res.headers['www-authenticate'], /^Bearer/, what)
      t.notMatch(res.body, /whsec_/)
    }
  }
  for (const url of ['/webhooks', `/webhooks/${id}`, `/webhooks/${id}/deliveries`]) {
    t.equal((await app.inject({ method: 'HEAD', url })).statusCode, 401, `HEAD ${url}`)
  }
  t.strictSame((await listSubscriptions(app)).map((s) => s.id), [id], 'no request without the token created or deleted anything')
})

// ---------------------------------------------------------------------------------
// 2. URL validation

t.test('a url that is not a valid webhook url answers 400 saying why', async (t) => {
  const app = await testApp(t, ENV)
  const longest = `https://${PUBLIC_V4}/${'a'.repeat(URL_MAX_LENGTH - `https://${PUBLIC_V4}/`.length)}`
  t.equal(longest.length, URL_MAX_LENGTH)
  const cases: Array<[unknown, RegExp]> = [
    [undefined, /^body\/url is required$/],
    [5, /^body\/url must be a string$/],
    [null, /^body\/url must be a string$/],
    [true, /^body\/url must be a string$/],
    [[PUBLIC_URL], /^body\/url must be a string$/],
    [{ href: PUBLIC_URL }, /^body\/url must be a string$/],
    [`${longest}a`, /^body\/url .*2048/],
    [`${longest}${'a'.repeat(10_000)}`, /^body\/url .*2048/],
    // The schema's pattern and format (the document states both), then the address policy.
    ['', /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    ['/hook', /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    [`${PUBLIC_V4}/hook`, /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    ['//example.com/hook', /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    ['https://', /^body\/url must be an absolute URL$/],
    ['https://[::1/hook', /^body\/url must be an absolute URL$/],
    ['https://exa mple.com/', /^body\/url must be an absolute URL$/],
    [`ftp://${PUBLIC_V4}/hook`, /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    [`http://${PUBLIC_V4}/hook`, /^the url must be https$/],
    ['http://example.com/hook', /^the url must be https$/],
    [`ws://${PUBLIC_V4}/hook`, /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    ['file:///etc/passwd', /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    ['javascript:alert(1)', /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    ['data:text/plain,hi', /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    [`https://user:pass@${PUBLIC_V4}/hook`, /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    [`https://user@${PUBLIC_V4}/hook`, /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    [`https://:pass@${PUBLIC_V4}/hook`, /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/],
    [`https://${PUBLIC_V4}:0/hook`, /^the url's port must be from 1 to 65535$/],
    [`https://${PUBLIC_V4}:00/hook`, /^the url's port must be from 1 to 65535$/]
  ]
  for (const [url, message] of cases) {
    const what = `url ${JSON.stringify(url)?.slice(0, 60)}`
    t.match(refused(t, await subscribe(app, url), what), message, what)
  }
  t.strictSame(await listSubscriptions(app), [], 'nothing refused was stored')

  const atLimit = await subscribed(t, app, longest)
  t.equal(atLimit.url, longest, 'a url of exactly 2048 characters is taken')
})

t.test('WEBHOOK_ALLOW_PRIVATE allows http, never another scheme or credentials', async (t) => {
  const app = await testApp(t, PRIVATE)
  const receiver = await startReceiver(t)
  const created = await subscribed(t, app, receiver.url)
  t.equal(created.url, receiver.url)
  t.match(created.url, /^http:\/\/127\.0\.0\.1:\d+\/hooks$/)
  t.equal((await subscribed(t, app, 'https://[::1]/hook')).url, 'https://[::1]/hook')
  t.match(refused(t, await subscribe(app, `ftp://${PUBLIC_V4}/hook`), 'ftp'), /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/)
  t.match(refused(t, await subscribe(app, 'http://u:p@127.0.0.1/hook'), 'credentials'), /^body\/url must start with http:\/\/ or https:\/\/ and hold no user name or password$/)
  t.equal((await listSubscriptions(app)).length, 2)
})

// ---------------------------------------------------------------------------------
// 3. SSRF: the address policy

t.test('a url whose host is not a public address is refused, saying so', async (t) => {
  const app = await testApp(t, ENV)
  // [host as written, the address it is]
  const literals: Array<[string, string]> = [
    ['127.0.0.1', '127.0.0.1'],
    ['127.1.2.3', '127.1.2.3'],
    ['10.0.0.1', '10.0.0.1'],
    ['172.16.0.1', '172.16.0.1'],
    ['172.31.255.254', '172.31.255.254'],
    ['192.168.1.1', '192.168.1.1'],
    ['169.254.169.254', '169.254.169.254'],
    ['100.64.0.1', '100.64.0.1'],
    ['224.0.0.1', '224.0.0.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['[::1]', '::1'],
    ['[fe80::1]', 'fe80::1'],
    ['[fc00::1]', 'fc00::1'],
    ['[fd12:3456::1]', 'fd12:3456::1'],
    ['[ff02::1]', 'ff02::1'],
    ['[::]', '::'],
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ['[::ffff:169.254.169.254]', '::ffff:a9fe:a9fe'],
    ['[::ffff:10.0.0.1]', '::ffff:a00:1'],
    ['[64:ff9b::7f00:1]', '64:ff9b::7f00:1'],
    ['[2002:7f00:1::]', '2002:7f00:1::'],
    // WHATWG URL reads these as IPv4 addresses
    ['2130706433', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['169.254.43518', '169.254.169.254'],
    ['%31%32%37.0.0.1', '127.0.0.1']
  ]
  for (const [host, address] of literals) {
    for (const url of [`https://${host}/hook`, `https://${host}:8443/hook?x=1`]) {
      t.equal(refused(t, await subscribe(app, url), url), NOT_PUBLIC, `${url}: ${address}`)
    }
  }
  // The system resolver: localhost is loopback, whichever family comes first.
  t.equal(refused(t, await subscribe(app, 'https://localhost/hook'), 'localhost'), RESOLVES_NOT_PUBLIC, 'localhost, without its address')
  t.strictSame(await listSubscriptions(app), [], 'nothing refused was stored')

  t.equal((await subscribed(t, app, PUBLIC_URL)).url, PUBLIC_URL, 'a public IPv4 literal is taken')
  t.equal((await subscribed(t, app, 'https://[2606:4700:4700::1111]/hook')).url, 'https://[2606:4700:4700::1111]/hook',
    'a public IPv6 literal is taken')
})

t.test('a host name is judged by every address it resolves to', async (t) => {
  const resolve = resolver({
    'hooks.example.com': [{ address: PUBLIC_V4, family: 4 }],
    'hooks.example.com.': [{ address: PUBLIC_V4, family: 4 }],
    'v6.example.com': [{ address: '2606:4700::6810:85e5', family: 6 }],
    'both.example.com': [{ address: PUBLIC_V4, family: 4 }, { address: '2606:4700::6810:85e5', family: 6 }],
    'mixed.example.com': [{ address: PUBLIC_V4, family: 4 }, { address: '10.0.0.1', family: 4 }],
    'mixed6.example.com': [{ address: '2606:4700::6810:85e5', family: 6 }, { address: 'fd00::1', family: 6 }],
    'mapped.example.com': [{ address: '::ffff:169.254.169.254', family: 6 }],
    // Resolvers print an address of ::/96 (IPv4-compatible, reserved) this way.
    'compatible.example.com': [{ address: '::8.8.8.8', family: 6 }],
    'loopback.example.com': [{ address: '127.0.0.1', family: 4 }],
    'empty.example.com': [],
    'broken.example.com': Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' }),
    'xn--bcher-kva.example': [{ address: PUBLIC_V4, family: 4 }]
  })
  const app = await testApp(t, ENV, { resolve })

  t.equal((await subscribed(t, app, 'https://hooks.example.com/hook')).url, 'https://hooks.example.com/hook')
  t.equal((await subscribed(t, app, 'https://HOOKS.Example.COM./hook')).url, 'https://hooks.example.com./hook')
  t.equal((await subscribed(t, app, 'https://v6.example.com/hook')).url, 'https://v6.example.com/hook')
  t.equal((await subscribed(t, app, 'https://both.example.com/hook')).url, 'https://both.example.com/hook')
  t.equal((await subscribed(t, app, 'https://bücher.example/hook')).url, 'https://xn--bcher-kva.example/hook', 'an IDN is resolved as punycode')

  // The kind of problem only: not the addresses, nor the name server's answer (ENOTFOUND, EAI_AGAIN).
  const cases: Array<[string, string]> = [
    ['https://mixed.example.com/hook', RESOLVES_NOT_PUBLIC],
    ['https://mixed6.example.com/hook', RESOLVES_NOT_PUBLIC],
    ['https://mapped.example.com/hook', RESOLVES_NOT_PUBLIC],
    ['https://compatible.example.com/hook', RESOLVES_NOT_PUBLIC],
    ['https://loopback.example.com/hook', RESOLVES_NOT_PUBLIC],
    ['https://missing.example.com/hook', NOT_RESOLVED],
    ['https://broken.example.com/hook', NOT_RESOLVED],
    ['https://empty.example.com/hook', NOT_RESOLVED]
  ]
  for (const [url, message] of cases) {
    const res = await subscribe(app, url)
    t.equal(refused(t, res, url), message, url)
    t.notMatch(res.body, /10\.0\.0\.1|fd00|169\.254|8\.8\.8\.8|127\.0\.0\.1|ENOTFOUND|EAI_AGAIN/, `${url}: nothing of what the name resolved to`)
  }

  t.equal((await listSubscriptions(app)).length, 5, 'only the public ones were stored')
  t.ok(resolve.asked.includes('hooks.example.com.'), 'the name is resolved as the URL holds it, lowercased')
  t.ok(resolve.asked.includes('xn--bcher-kva.example'), 'an IDN is resolved as punycode')
  const askedBefore = resolve.asked.length
  await subscribed(t, app, PUBLIC_URL)
  refused(t, await subscribe(app, 'https://10.0.0.1/hook'), 'a private literal')
  t.equal(resolve.asked.length, askedBefore, 'an address literal is never resolved')
})

t.test('WEBHOOK_ALLOW_PRIVATE takes loopback and private addresses', async (t) => {
  const resolve = resolver({ 'internal.example': [{ address: '10.1.2.3', family: 4 }] })
  const app = await testApp(t, PRIVATE, { resolve })
  const receiver = await startReceiver(t)
  for (const url of [receiver.url, 'http://10.0.0.1/hook', 'https://[::1]:8443/hook', 'http://internal.example/hook', 'https://169.254.169.254/']) {
    t.equal((await subscribed(t, app, url)).url, url)
  }
  t.equal(refused(t, await subscribe(app, 'http://missing.example/hook'), 'unresolvable'), NOT_RESOLVED,
    'a name that does not resolve is still refused')
})

// ---------------------------------------------------------------------------------
// 4. The limit

t.test(`at most ${MAX_SUBSCRIPTIONS} subscriptions exist at a time`, async (t) => {
  const app = await testApp(t, ENV)
  const ids: string[] = []
  for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) ids.push((await subscribed(t, app, `${PUBLIC_URL}/${i}`)).id)
  t.equal(new Set(ids).size, MAX_SUBSCRIPTIONS)
  const full = await subscribe(app, `${PUBLIC_URL}/full`)
  t.equal(assertError(t, full, 409, 'the 21st'),
    `there are already ${MAX_SUBSCRIPTIONS} webhook subscriptions, the most the store keeps; delete one first`)
  t.notOk(full.headers.location, 'no Location on a refusal')
  t.equal((await listSubscriptions(app)).length, MAX_SUBSCRIPTIONS)
  // The url is checked before the limit: a refused url still says why it is refused.
  t.match(refused(t, await subscribe(app, 'https://10.0.0.1/hook'), 'private at the limit'), NOT_PUBLIC)

  t.equal((await app.inject({ method: 'DELETE', url: `/webhooks/${ids[7]}`, headers: AUTH })).statusCode, 204)
  const again = await subscribed(t, app, `${PUBLIC_URL}/again`)
  t.notOk(ids.includes(again.id))
  assertError(t, await subscribe(app, `${PUBLIC_URL}/full-again`), 409, 'full again')
  const listed = (await listSubscriptions(app)).map((s) => s.id).sort()
  t.strictSame(listed, [...ids.filter((_, i) => i !== 7), again.id].sort())
})

t.test('concurrent subscribes never exceed the limit', async (t) => {
  const app = await testApp(t, ENV)
  const answers = await Promise.all(Array.from({ length: MAX_SUBSCRIPTIONS + 10 }, async (_, i) => await subscribe(app, `${PUBLIC_URL}/${i}`)))
  const statuses = answers.map((res) => res.statusCode)
  t.equal(statuses.filter((s) => s === 201).length, MAX_SUBSCRIPTIONS, `${MAX_SUBSCRIPTIONS} created`)
  t.equal(statuses.filter((s) => s === 409).length, 10, 'the rest refused with 409')
  t.equal((await listSubscriptions(app)).length, MAX_SUBSCRIPTIONS)
})

// ---------------------------------------------------------------------------------
// 5. The delivery log

/** An app allowing private addresses, a receiver, and a subscription of it. */
async function delivering (t: Test, env: Record<string, string> = {}, answer?: Parameters<typeof startReceiver>[1]): Promise<{
  app: FastifyInstance
  receiver: Receiver
  subscription: Created
}> {
  const app = await testApp(t, { ...PRIVATE, ...env })
  const receiver = await startReceiver(t, answer)
  const subscription = await subscribed(t, app, receiver.url)
  return { app, receiver, subscription }
}

async function createPlant (t: Test, app: FastifyInstance, id: number): Promise<void> {
  const res = await postPlant(app, { id, name: `plant ${id}` })
  t.equal(res.statusCode, 200, `plant ${id} created`)
}

const delivered = (count: number) => (log: Delivery[]): boolean => log.length === count && log.every((d) => d.status === 'delivered')

t.test('the delivery log lists every delivery, newest first, a page at a time', async (t) => {
  const { app, receiver, subscription } = await delivering(t)
  const { id } = subscription
  const PLANTS = 25
  for (let plant = 1; plant <= PLANTS; plant++) await createPlant(t, app, plant)
  await receiver.waitFor(PLANTS)
  await logUntil(app, id, delivered(PLANTS))
  // A repeated create (a safe retry) announces nothing: only a new plant is delivered.
  await createPlant(t, app, PLANTS)
  t.equal((await deliveries(app, id)).length, PLANTS, 'a repeated create writes no delivery')

  const pages: Delivery[][] = []
  const links: string[] = []
  let next: string | undefined = `/webhooks/${id}/deliveries?limit=10`
  while (next !== undefined && pages.length < 10) {
    const res = await app.inject({ url: next, headers: AUTH })
    t.equal(res.statusCode, 200, next)
    pages.push(res.json())
    const link = res.headers.link
    next = undefined
    if (typeof link === 'string') {
      links.push(link)
      const match = /^<(\/webhooks\/(wh_[0-9a-f]{32})\/deliveries\?limit=10&before=(\d+))>; rel="next"$/.exec(link)
      t.ok(match, `a next link: ${link}`)
      t.equal(match?.[2], id, 'to the same subscription')
      next = match?.[1]
    }
  }
  t.strictSame(pages.map((page) => page.length), [10, 10, 5], 'pages of 10, the last one short')
  t.equal(links.length, 2, 'a Link on every page but the last')
  const log = pages.flat()
  t.equal(new Set(log.map((d) => d.id)).size, PLANTS, 'distinct deliveries')
  t.strictSame(log.map((d) => d.plantId), Array.from({ length: PLANTS }, (_, i) => PLANTS - i), 'newest first')
  for (const d of log) {
    t.strictSame(Object.keys(d).sort(), ['attempts', 'createdAt', 'deliveredAt', 'event', 'id', 'lastStatusCode', 'plantId', 'status'],
      `delivery of plant ${d.plantId}: its fields`)
    t.match(d.id, DELIVERY_ID)
    t.equal(d.event, 'plant.created')
    t.equal(d.status, 'delivered')
    t.equal(d.attempts, 1)
    t.equal(d.lastStatusCode, 200)
    t.ok(Date.parse(d.deliveredAt ?? '') >= Date.parse(d.createdAt), 'delivered after it was created')
  }
  for (let i = 1; i < log.length; i++) t.ok(log[i - 1].createdAt >= log[i].createdAt, 'createdAt never increases down the log')
  // Time-ordered ids (new ones land at the end of the store's index): the first 12 hex
  // digits are the delivery's creation time in milliseconds.
  t.same(log.filter((d) => parseInt(d.id.slice(4, 16), 16) !== Date.parse(d.createdAt)), [], 'each id begins with its creation time')

  // What the receiver saw: one request per delivery, under the delivery's id, with its plant, signed.
  const seen = receiver.received.map((r) => r.headers['webhook-id'])
  t.strictSame([...seen].sort(), log.map((d) => d.id).sort(), 'every delivery id is a webhook-id the receiver saw, once')
  const plantOf = new Map(log.map((d) => [d.id, d.plantId]))
  for (const request of receiver.received) {
    const deliveryId = String(request.headers['webhook-id'])
    t.equal(JSON.parse(request.body).id, plantOf.get(deliveryId), `${deliveryId} carried its plant`)
    t.doesNotThrow(() => receiver.verify(subscription.secret, request), 'signed with the subscription\'s secret')
  }

  const byDefault = await app.inject({ url: `/webhooks/${id}/deliveries`, headers: AUTH })
  t.equal(byDefault.json().length, 20, 'a page is 20 by default')
  t.match(byDefault.headers.link, new RegExp(`^</webhooks/${id}/deliveries\\?limit=20&before=\\d+>; rel="next"$`))
  const all = await app.inject({ url: `/webhooks/${id}/deliveries?limit=100`, headers: AUTH })
  t.equal(all.json().length, PLANTS)
  t.notOk(all.headers.link, 'no Link when nothing more remains')
  const exact = await app.inject({ url: `/webhooks/${id}/deliveries?limit=${PLANTS}`, headers: AUTH })
  t.equal(exact.json().length, PLANTS)
  t.notOk(exact.headers.link, 'no Link when the page ends exactly at the last delivery')
  const oldest = await app.inject({ url: `/webhooks/${id}/deliveries?before=1`, headers: AUTH })
  t.strictSame(oldest.json(), [], 'nothing before the first cursor')
  t.notOk(oldest.headers.link)

  for (const [query, message] of [
    ['limit=0', /^querystring\/limit must be at least 1$/],
    ['limit=101', /^querystring\/limit must be at most 100$/],
    ['limit=-1', /^querystring\/limit /],
    ['limit=abc', /^querystring\/limit must be an integer$/],
    ['limit=1.5', /^querystring\/limit must be an integer$/],
    ['limit=1&limit=2', /^querystring\/limit /],
    ['before=0', /^querystring\/before must be at least 1$/],
    ['before=-5', /^querystring\/before /],
    ['before=abc', /^querystring\/before must be an integer$/],
    ['before=2.5', /^querystring\/before must be an integer$/],
    ['before=9007199254740992', /^querystring\/before must be at most 9007199254740991$/],
    ['before=99999999999999999999', /^querystring\/before /]
  ] as const) {
    t.match(assertError(t, await app.inject({ url: `/webhooks/${id}/deliveries?${query}`, headers: AUTH }), 400, query), message, query)
  }
  t.match(assertError(t, await app.inject({ url: `/webhooks/${UNKNOWN_ID}/deliveries`, headers: AUTH }), 404, 'unknown subscription'),
    `no webhook subscription has id ${UNKNOWN_ID}`)
})

t.test('each subscription has its own log, and deleting one drops it', async (t) => {
  const { app, receiver, subscription } = await delivering(t)
  for (let plant = 1; plant <= 3; plant++) await createPlant(t, app, plant)
  const second = await subscribed(t, app, receiver.url)
  await createPlant(t, app, 4)
  await receiver.waitFor(5)
  const first = await logUntil(app, subscription.id, delivered(4))
  const other = await logUntil(app, second.id, delivered(1))
  t.strictSame(first.map((d) => d.plantId), [4, 3, 2, 1])
  t.strictSame(other.map((d) => d.plantId), [4], 'a subscription gets the plants created after it, only')
  t.not(other[0].id, first[0].id, 'one delivery per subscription, each with its own id')
  t.equal((await app.inject({ method: 'DELETE', url: `/webhooks/${subscription.id}`, headers: AUTH })).statusCode, 204)
  assertError(t, await app.inject({ url: `/webhooks/${subscription.id}/deliveries`, headers: AUTH }), 404, 'the deleted one has no log')
  t.strictSame((await deliveries(app, second.id)).map((d) => d.id), [other[0].id], 'the other log is untouched')
})

// ---------------------------------------------------------------------------------
// 6. Retry

t.test('retrying a delivered delivery sends it again under the same webhook-id', async (t) => {
  const { app, receiver, subscription } = await delivering(t)
  const { id } = subscription
  await createPlant(t, app, 7)
  await createPlant(t, app, 8)
  await receiver.waitFor(2)
  const log = await logUntil(app, id, delivered(2))
  const target = log.find((d) => d.plantId === 7)!
  const first = receiver.received.find((r) => r.headers['webhook-id'] === target.id)!
  t.ok(first, 'the receiver got the delivery once')

  const res = await retry(app, id, target.id)
  t.equal(res.statusCode, 202)
  t.equal(res.body, '', 'no body: the delivery log says where it stands')
  const [, , again] = await receiver.waitFor(3)
  t.equal(again.headers['webhook-id'], target.id, 'the same webhook-id')
  t.equal(again.body, first.body, 'the same body')
  t.doesNotThrow(() => receiver.verify(subscription.secret, again), 'signed again')
  const after = await logUntil(app, id, (l) => delivered(2)(l) && l.find((d) => d.id === target.id)?.deliveredAt !== target.deliveredAt)
  t.strictSame(after.map((d) => d.id), log.map((d) => d.id), 'still the same deliveries, in the same order')
  const restarted = after.find((d) => d.id === target.id)!
  t.equal(restarted.status, 'delivered')
  t.equal(restarted.attempts, 1, 'started over: its attempts counted from zero')
  t.equal(restarted.createdAt, target.createdAt, 'its createdAt is the plant\'s, unchanged')
  t.strictSame(after.find((d) => d.id !== target.id), log.find((d) => d.id !== target.id), 'the other delivery is untouched')

  t.match(assertError(t, await retry(app, id, UNKNOWN_DELIVERY), 404, 'unknown delivery'),
    `subscription ${id} has no delivery with id ${UNKNOWN_DELIVERY}`)
  t.match(assertError(t, await retry(app, id, 'msg_nope'), 400, 'malformed delivery id'), /^params\/deliveryId /)
  t.match(assertError(t, await retry(app, UNKNOWN_ID, target.id), 404, 'unknown subscription'), `no webhook subscription has id ${UNKNOWN_ID}`)

  // A delivery is retried through its own subscription only.
  const other = await subscribed(t, app, receiver.url)
  assertError(t, await retry(app, other.id, target.id), 404, 'another subscription\'s delivery')
  t.equal(receiver.received.length, 3, 'nothing else was sent')
})

t.test('retrying a failed delivery starts it over', async (t) => {
  const { app, receiver, subscription } = await delivering(t, { WEBHOOK_MAX_ATTEMPTS: '1' }, () => 500)
  const { id } = subscription
  await createPlant(t, app, 1)
  await receiver.waitFor(1)
  const [failed] = await logUntil(app, id, (l) => l.length === 1 && l[0].status === 'failed')
  t.equal(failed.status, 'failed')
  t.equal(failed.attempts, 1)
  t.equal(failed.lastStatusCode, 500)
  t.notOk('deliveredAt' in failed)
  t.notOk('nextAttemptAt' in failed, 'a failed delivery is due never')

  receiver.answer(() => 200)
  t.equal((await retry(app, id, failed.id)).statusCode, 202)
  const [, again] = await receiver.waitFor(2)
  t.equal(again.headers['webhook-id'], failed.id)
  const [now] = await logUntil(app, id, delivered(1))
  t.equal(now.id, failed.id)
  t.equal(now.attempts, 1, 'one attempt since the retry')
  t.equal(now.lastStatusCode, 200)
  t.notOk('lastError' in now, 'the old failure is cleared')
})

t.test('retrying a pending delivery answers 409', async (t) => {
  const { app, receiver, subscription } = await delivering(t, { WEBHOOK_RETRY_BASE_MS: '600000' }, () => 500)
  const { id } = subscription
  await createPlant(t, app, 1)
  await receiver.waitFor(1)
  const [pending] = await logUntil(app, id, (l) => l.length === 1 && l[0].attempts >= 1)
  t.equal(pending.status, 'pending')
  t.equal(pending.lastStatusCode, 500)
  t.ok(pending.nextAttemptAt, 'a pending delivery has its next attempt due')
  t.equal(assertError(t, await retry(app, id, pending.id), 409, 'pending'),
    `delivery ${pending.id} is pending already: its next attempt is in the delivery log`)
  const [still] = await deliveries(app, id)
  t.equal(still.id, pending.id)
  t.equal(still.status, 'pending', 'the 409 changed nothing')
  t.ok(still.attempts >= 1, 'its attempts were not reset')
})

// URL forms whose refusal was once missing.

t.test('a url is at most 2048 characters once normalized', async (t) => {
  const app = await testApp(t, ENV)
  // 822 characters as sent; each é becomes %C3%A9 and each 日 %E6%97%A5, so 4,822 or 7,222 once normalized.
  for (const url of [`${PUBLIC_URL}/${'é'.repeat(800)}`, `${PUBLIC_URL}/${'日'.repeat(800)}`]) {
    t.ok(url.length <= URL_MAX_LENGTH, 'within the limit as sent')
    t.ok(new URL(url).href.length > URL_MAX_LENGTH, 'beyond it once normalized')
    const res = await subscribe(app, url)
    t.equal(res.statusCode, 400, `refused: answered ${res.statusCode} with a url of ${String(res.json().url?.length)} characters`)
    if (res.statusCode === 400) t.match(res.json().message, /2048/)
  }
  const stored = (await listSubscriptions(app)).map(({ url }) => url.length)
  t.ok(stored.every((length) => length <= URL_MAX_LENGTH), `no stored url is longer than 2048 characters: ${stored.join(', ')}`)
})

t.test('an IPv4-compatible IPv6 address (::/96) is refused like the IPv4 address it embeds', async (t) => {
  const app = await testApp(t, ENV)
  for (const [host, address] of [['[::127.0.0.1]', '::7f00:1'], ['[::169.254.169.254]', '::a9fe:a9fe'], ['[::10.0.0.1]', '::a00:1']]) {
    const res = await subscribe(app, `https://${host}/hook`)
    t.equal(res.statusCode, 400, `https://${host}/hook is refused: ${res.body.slice(0, 120)}`)
    if (res.statusCode === 400) t.equal(res.json().message, NOT_PUBLIC, address)
  }
  t.strictSame(await listSubscriptions(app), [], 'none stored')
})

// ---------------------------------------------------------------------------------
// 7. Properties

/** Throws unless the answer is exactly the Error shape with status 400. */
function expectRefusal (res: LightMyRequestResponse, input: unknown): string {
  const body = res.json()
  if (res.statusCode !== 400 || !/^application\/json/.test(String(res.headers['content-type'])) ||
    !['code,error,message', 'code,details,error,message'].includes(Object.keys(body).sort().join()) ||
    body.error !== 400 || typeof body.message !== 'string' || (!String(body.code).startsWith('invalid_') && body.code !== 'webhook_url_refused') ||
    body.message.length > 300) {
    throw new Error(`${JSON.stringify(input)} answered ${res.statusCode}: ${res.body.slice(0, 300)}`)
  }
  return body.message
}

/** The host of a URL as WHATWG URL reads it, brackets removed; undefined when it is not a URL. */
function hostOf (url: string): string | undefined {
  try {
    return new URL(url).hostname.replace(/^\[(.*)\]$/, '$1')
  } catch {
    return undefined
  }
}

// Ranges no webhook may go to, by this test's own reading (not the policy's).
const NOT_PUBLIC_RANGES = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16',
  '224.0.0.0/4', '240.0.0.0/4', '::/128', '::1/128', '::ffff:0:0/96', 'fc00::/7', 'fe80::/10', 'ff00::/8', '64:ff9b::/96', '2002::/16']
  .map((cidr) => ipaddr.parseCIDR(cidr))

function inNotPublicRange (address: string): boolean {
  const parsed = ipaddr.parse(address)
  return NOT_PUBLIC_RANGES.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits)) ||
    (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() && inNotPublicRange(parsed.toIPv4Address().toString()))
}

const octet = fc.integer({ min: 0, max: 255 })
const anyUrl = fc.oneof(
  fc.webUrl(),
  fc.webUrl({ validSchemes: ['https'], authoritySettings: { withIPv4: true, withIPv6: true, withIPv4Extended: true, withPort: true } }),
  fc.webUrl({ validSchemes: ['https'], authoritySettings: { withUserInfo: true }, withQueryParameters: true, withFragments: true }),
  fc.ipV4().map((ip) => `https://${ip}/hook`),
  fc.ipV4Extended().map((ip) => `https://${ip}/hook`),
  fc.ipV6().map((ip) => `https://[${ip}]/hook`),
  fc.domain().map((name) => `https://${name}/hook`),
  fc.tuple(fc.domain(), fc.integer({ min: 0, max: 65535 })).map(([name, port]) => `https://${name}:${port}/`),
  fc.tuple(octet, octet, octet, octet).map((parts) => `https://${parts.join('.')}/`),
  fc.constantFrom('https://localhost/', 'https://LOCALHOST./', 'https://metadata.google.internal/', 'https://0/', 'https://[::]/'),
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string().map((s) => `https://${s}`),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => `https://${s}.example/`)
)

t.test('property: any url is answered 201 or 400, and only an address literal is ever taken', async (t) => {
  // Every name resolves to loopback: no url with a name may be taken.
  let resolved = 0
  const app = await testApp(t, ENV, {
    resolve: async () => {
      resolved++
      return [{ address: '127.0.0.1', family: 4 }]
    }
  })
  const seen = { created: 0, refused: 0 }
  await fc.assert(fc.asyncProperty(anyUrl, async (url) => {
    const resolvedBefore = resolved
    const res = await subscribe(app, url)
    const host = hostOf(url)
    if (res.statusCode === 201) {
      seen.created++
      const created: Created = res.json()
      const taken = hostOf(created.url)
      const deleted = await app.inject({ method: 'DELETE', url: `/webhooks/${created.id}`, headers: AUTH })
      if (deleted.statusCode !== 204) throw new Error(`DELETE answered ${deleted.statusCode}`)
      if (taken === undefined || isIP(taken) === 0) throw new Error(`${JSON.stringify(url)} was taken with a name: ${created.url}`)
      if (taken !== host) throw new Error(`${JSON.stringify(url)} was taken for another host: ${created.url}`)
      if (inNotPublicRange(taken)) throw new Error(`${JSON.stringify(url)} was taken for an address that is not public: ${taken}`)
      if (resolved !== resolvedBefore) throw new Error(`${JSON.stringify(url)}: an address literal was resolved`)
      if (!SUBSCRIPTION_ID.test(created.id) || !SECRET.test(created.secret)) throw new Error(`a malformed answer: ${res.body}`)
      return
    }
    seen.refused++
    const message = expectRefusal(res, url)
    if (host !== undefined && isIP(host) === 0 && /^https:\/\//i.test(url) && !/[@]/.test(url) && url.length <= URL_MAX_LENGTH &&
      ![RESOLVES_NOT_PUBLIC, NOT_RESOLVED, 'the url\'s port must be from 1 to 65535', 'the host name is longer than 253 characters'].includes(message)) {
      throw new Error(`${JSON.stringify(url)} with a name was refused for another reason: ${message}`)
    }
  }), { seed, numRuns })
  t.ok(seen.created > 0, `some urls were taken (${seen.created})`)
  t.ok(seen.refused > 0, `some urls were refused (${seen.refused})`)
  t.strictSame(await listSubscriptions(app), [], 'every subscription made was deleted')
})

t.test('property: no spelling of an address in 10/8, 127/8 or 169.254/16 is taken', async (t) => {
  const app = await testApp(t, ENV)
  const privateV4 = fc.oneof(
    fc.tuple(fc.constant(10), octet, octet, octet),
    fc.tuple(fc.constant(127), octet, octet, octet),
    fc.tuple(fc.constant(169), fc.constant(254), octet, octet)
  )
  const hex = (n: number): string => n.toString(16)
  const spelled = fc.tuple(privateV4, fc.integer({ min: 0, max: 9 }), fc.boolean()).map(([[a, b, c, d], how, upper]) => {
    const dotted = `${a}.${b}.${c}.${d}`
    const whole = a * 2 ** 24 + b * 2 ** 16 + c * 2 ** 8 + d
    const host = [
      dotted,
      String(whole),
      `0x${hex(whole)}`,
      [a, b, c, d].map((n) => `0${n.toString(8)}`).join('.'),
      `${a}.${b * 2 ** 16 + c * 2 ** 8 + d}`,
      `${a}.${b}.${c * 2 ** 8 + d}`,
      `${dotted}.`,
      `[::ffff:${dotted}]`,
      `[::ffff:${hex(a * 256 + b)}:${hex(c * 256 + d)}]`,
      `[0:0:0:0:0:ffff:${dotted}]`
    ][how]
    return { address: dotted, url: `https://${upper ? host.toUpperCase() : host}/hook` }
  })
  await fc.assert(fc.asyncProperty(spelled, async ({ address, url }) => {
    const res = await subscribe(app, url)
    if (res.statusCode === 201) {
      await app.inject({ method: 'DELETE', url: `/webhooks/${String(res.json().id)}`, headers: AUTH })
      throw new Error(`${url} (${address}) was taken`)
    }
    const message = expectRefusal(res, url)
    if (message !== NOT_PUBLIC) throw new Error(`${url} (${address}) was refused for another reason: ${message}`)
  }), { seed, numRuns })
  t.strictSame(await listSubscriptions(app), [], 'nothing was stored')
})
