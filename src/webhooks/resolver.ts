import type { LookupAddress } from 'node:dns'
import { Resolver } from 'node:dns/promises'

/** Resolves a host name to every address it has. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>

// A query not answered within a second is asked once more: a name whose name servers
// are silent fails with ETIMEOUT about 4 s after it was asked.
const QUERY_TIMEOUT_MS = 1000
const QUERY_TRIES = 2

const LOOPBACK: LookupAddress[] = [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]

/**
 * Webhook host names resolved through c-ares on the event loop, not `dns.lookup` on the
 * thread pool, where one receiver's silent name servers queued every other lookup.
 * IPv4 first; /etc/hosts is not read, but localhost and its subdomains are loopback (RFC 6761).
 */
export function systemResolver (): Resolve {
  const resolver = new Resolver({ timeout: QUERY_TIMEOUT_MS, tries: QUERY_TRIES })
  return async (hostname) => {
    if (/(^|\.)localhost\.?$/i.test(hostname)) return LOOPBACK
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)])
    const addresses = [
      ...v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : [],
      ...v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []
    ]
    if (addresses.length > 0) return addresses
    // No address of either family: the failure that says more than "no record of this type".
    for (const result of [v4, v6]) {
      if (result.status === 'rejected' && (result.reason as NodeJS.ErrnoException).code !== 'ENODATA') throw result.reason
    }
    return []
  }
}
