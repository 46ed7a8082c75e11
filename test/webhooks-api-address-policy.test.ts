import { isIP } from 'node:net'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import type { Resolve } from '../src/webhooks/resolver.ts'
import { AUTH, testApp } from './helpers/app.ts'
import { fuzzSettings } from './helpers/fuzz.ts'
import { startReceiver } from './helpers/receiver.ts'
import {
  ENV, NOT_PUBLIC, NOT_RESOLVED, PRIVATE, PUBLIC_URL, PUBLIC_V4, RESOLVES_NOT_PUBLIC, SECRET, SUBSCRIPTION_ID, URL_MAX_LENGTH,
  listSubscriptions, refused, subscribe, subscribed, type Created
} from './helpers/webhooks-api.ts'
import { anyUrl, hostOf, inNotPublicRange, octet } from './helpers/webhook-urls.ts'

// The address policy that guards subscribing against SSRF, through app.inject: names resolved through
// the `resolve` seam (or, for `localhost`, the system's resolver), and fast-check properties over urls.

const { seed, numRuns } = fuzzSettings(200)

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
// 1. SSRF: the address policy

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

// A url form whose refusal was once missing.

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
// 2. Properties

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
