import type { LookupAddress } from 'node:dns'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import { WEBHOOK_URL_MAX_LENGTH } from '../../schemas/webhook.ts'
import { systemResolver, type Resolve } from './resolver.ts'

// A name that takes longer than this to resolve is refused rather than waited on.
const RESOLVE_TIMEOUT_MS = 5000
// The longest name DNS can carry.
const MAX_HOST_LENGTH = 253
// A detail for the log names at most this many characters of a host.
const MAX_ECHO = 100
// The only IPv6 space routed on the internet; ipaddr.js calls some reserved space (::a.b.c.d) unicast.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3')

/**
 * A URL or an address a webhook may not go to. The message, shown to the client, says which
 * kind of problem; `detail`, for the operator's log only, names the host and its addresses.
 */
export class AddressRefused extends Error {
  readonly detail: string | undefined

  constructor (message: string, detail?: string) {
    super(message)
    this.name = 'AddressRefused'
    this.detail = detail
  }
}

// What a client is told: the kind of problem.
const NOT_PUBLIC = 'webhooks go to public addresses only'
const NOT_RESOLVED = 'the host does not resolve'
const NOT_RESOLVED_IN_TIME = 'the host did not resolve in time'

/**
 * True for a public address: every special range of ipaddr.js is refused (cloud metadata
 * too), and IPv6 forms embedding IPv4 (NAT64, 6to4, Teredo), which could lead back to them.
 */
export function isPublic (address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.parse(inHex(address))
  } catch {
    return false
  }
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) parsed = parsed.toIPv4Address()
  if (parsed instanceof ipaddr.IPv6 && !parsed.match(GLOBAL_UNICAST_V6)) return false
  return parsed.range() === 'unicast'
}

/**
 * A dotted-tail IPv6 address in hex: ipaddr.js reads `::a.b.c.d` (reserved) as the mapped
 * `::ffff:a.b.c.d`, WHATWG's URL parser does not. Throws for what URL does not take.
 */
function inHex (address: string): string {
  if (!address.includes(':') || !address.includes('.')) return address
  return new URL(`http://[${address}]`).hostname.slice(1, -1)
}

/**
 * No SSRF: https to public addresses only, checked at subscribing and at every connection
 * (a name may resolve elsewhere by then). `allowPrivate` lifts both, for development.
 */
export class AddressPolicy {
  readonly #allowPrivate: boolean
  readonly #resolve: Resolve

  constructor (allowPrivate: boolean, resolve: Resolve = systemResolver()) {
    this.#allowPrivate = allowPrivate
    this.#resolve = resolve
  }

  /** The URL, normalized, when a webhook may go to it; throws AddressRefused saying why not. */
  async check (raw: string): Promise<URL> {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw new AddressRefused('the url is not an absolute URL')
    }
    // Normalizing percent-encodes and punycodes: the URL stored may be longer than the one sent.
    if (url.href.length > WEBHOOK_URL_MAX_LENGTH) {
      throw new AddressRefused(`the url is longer than ${WEBHOOK_URL_MAX_LENGTH} characters once normalized`)
    }
    this.allowProtocol(url.protocol)
    if (url.username !== '' || url.password !== '') throw new AddressRefused('the url must not hold a user name or password')
    // Port 0 reaches nothing: every delivery would be retried for a day.
    if (url.port === '0') throw new AddressRefused('the url\'s port must be from 1 to 65535')
    await this.addresses(url.hostname)
    return url
  }

  /** Throws AddressRefused unless a webhook may use this protocol (`https:`, or `http:` too when private addresses are allowed). */
  allowProtocol (protocol: string): void {
    if (protocol === 'https:' || (this.#allowPrivate && protocol === 'http:')) return
    throw new AddressRefused(this.#allowPrivate ? 'the url must be http or https' : 'the url must be https')
  }

  /** Every address the host resolves to, once each is known to be allowed; throws AddressRefused otherwise. */
  async addresses (hostname: string): Promise<LookupAddress[]> {
    const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname
    if (host.length > MAX_HOST_LENGTH) throw new AddressRefused(`the host name is longer than ${MAX_HOST_LENGTH} characters`)
    const addresses = ipaddr.isValid(host)
      ? [{ address: host, family: host.includes(':') ? 6 : 4 }]
      : await this.#resolved(host)
    for (const { address } of addresses) this.allow(address, host)
    return addresses
  }

  /** Throws AddressRefused unless a webhook may connect to this address, that `host` (a name or the address itself) stands for. */
  allow (address: string, host = address): void {
    if (this.#allowPrivate || isPublic(address)) return
    // The addresses behind a name are someone's network: for the log, not the client.
    if (host === address || host === `[${address}]`) throw new AddressRefused(`the host is not a public address; ${NOT_PUBLIC}`, `${address} is not public`)
    throw new AddressRefused(`the host resolves to an address that is not public; ${NOT_PUBLIC}`, `${echo(host)} resolves to ${address}`)
  }

  /** A `lookup` for sockets: resolves as check does, so a connection only ever goes to an allowed address. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.addresses(hostname).then((addresses) => {
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses
      if (wanted.length === 0) throw new AddressRefused(`the host has no IPv${options.family} address`, `${echo(hostname)} has no IPv${options.family} address`)
      if (options.all === true) callback(null, wanted)
      else callback(null, wanted[0].address, wanted[0].family)
    }).catch((err: NodeJS.ErrnoException) => callback(err, '', 0))
  }

  async #resolved (host: string): Promise<LookupAddress[]> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new AddressRefused(NOT_RESOLVED_IN_TIME, `${echo(host)} did not resolve within ${RESOLVE_TIMEOUT_MS} ms`)), RESOLVE_TIMEOUT_MS)
    })
    try {
      const addresses = await Promise.race([this.#resolve(host), timeout])
      if (addresses.length === 0) throw new AddressRefused(NOT_RESOLVED, `${echo(host)} has no address`)
      return addresses
    } catch (err) {
      if (err instanceof AddressRefused) throw err
      const code = (err as NodeJS.ErrnoException).code ?? 'error'
      // Which answer a name server gave is its network's business: a client learns the kind.
      throw new AddressRefused(code === 'ETIMEOUT' ? NOT_RESOLVED_IN_TIME : NOT_RESOLVED, `${echo(host)} does not resolve (${code})`)
    } finally {
      clearTimeout(timer)
    }
  }
}

function echo (host: string): string {
  return host.length > MAX_ECHO ? `${host.slice(0, MAX_ECHO)}…` : host
}
