import t from 'tap'
import { AUTH, assertError, testApp } from './helpers/app.ts'
import { startReceiver } from './helpers/receiver.ts'
import {
  ENV, NOT_PUBLIC, PRIVATE, PUBLIC_URL, PUBLIC_V4, SECRET, SUBSCRIPTION_ID, UNKNOWN_DELIVERY, UNKNOWN_ID, URL_MAX_LENGTH,
  listSubscriptions, refused, retry, subscribe, subscribed, type Created
} from './helpers/webhooks-api.ts'

// The webhook subscription API through app.inject: creating, showing, listing and deleting, the token,
// the ids, the url's form and the limit (the address policy: webhooks-api-address-policy.test.ts).

const MAX_SUBSCRIPTIONS = 20

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

/** Every route that takes a subscription id, with this one. */
const routesOf = (id: string) => [
  ['GET', `/webhooks/${id}`],
  ['DELETE', `/webhooks/${id}`],
  ['GET', `/webhooks/${id}/deliveries`],
  ['POST', `/webhooks/${id}/deliveries/${UNKNOWN_DELIVERY}/retry`]
] as const

t.test('an unknown id answers 404 on every route', async (t) => {
  const app = await testApp(t, ENV)
  await subscribed(t, app, PUBLIC_URL)
  for (const [method, url] of routesOf(UNKNOWN_ID)) {
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
    for (const [method, url] of routesOf(bad)) {
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

// A url form whose refusal was once missing.

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

// ---------------------------------------------------------------------------------
// 3. The limit

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
