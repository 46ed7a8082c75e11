import { join } from 'node:path'
import proxyAddr from '@fastify/proxy-addr'
import type { DatabaseConfig } from '../store/open.ts'
import { ConfigError } from './error.ts'

export function proxies (raw: string): string[] {
  const list = raw.split(',').map((a) => a.trim()).filter((a) => a !== '')
  try {
    proxyAddr.compile(list)
  } catch (err) {
    throw new ConfigError(`TRUST_PROXY must list IP addresses, CIDR ranges, loopback, linklocal or uniquelocal: ${(err as Error).message}`)
  }
  return list
}

// A browser sends its page's origin serialized (RFC 6454): a listed one must be written
// the same way, or it would never match.
export function corsOrigins (raw: string): string[] {
  const list = raw.split(',').map((o) => o.trim()).filter((o) => o !== '')
  if (list.includes('*') && list.length > 1) {
    throw new ConfigError('CORS_ORIGINS: * allows every origin and cannot be listed with others')
  }
  for (const origin of list) {
    const serialized = origin === '*' ? origin : webOrigin(origin)
    if (serialized !== origin) {
      throw new ConfigError('CORS_ORIGINS must be * or list origins as a browser sends them (http or https, host, ' +
        `optional port, no path: https://app.example.com); got ${JSON.stringify(origin)}` +
        (serialized === undefined ? '' : `, which as an origin is ${JSON.stringify(serialized)}`))
    }
  }
  return list
}

// A name (punycode, as URL writes it) or an address, never a pattern such as
// *.example.com, which URL would take as a name.
const HOST = /^(?:[a-z0-9._-]+|\[[0-9a-f:.]+\])$/

function webOrigin (text: string): string | undefined {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && HOST.test(url.hostname) ? url.origin : undefined
  } catch {
    return undefined
  }
}

/** `dir`: where a relative SQLite path is; the working directory when unset. */
export function database (url: string, poolSize: number, dir?: string): DatabaseConfig {
  if (url === 'memory:') return { engine: 'memory' }
  if (/^postgres(ql)?:\/\/./.test(url)) return { engine: 'postgres', url, poolSize }
  if (url.startsWith('sqlite:') && url.length > 'sqlite:'.length) {
    const path = url.slice('sqlite:'.length)
    return { engine: 'sqlite', path: dir === undefined ? path : join(dir, path) }
  }
  // Only the scheme is echoed: a URL may hold a password.
  const got = url.includes(':') ? `a URL starting ${JSON.stringify(url.split(':', 1)[0] + ':')}` : 'a value with no scheme'
  throw new ConfigError(`DATABASE_URL must be sqlite:<path>, postgres://… or memory:; got ${got}`)
}

// Shares of the open-file limit for client connections and webhook attempts; the rest
// (at least a tenth) stays for the store, the log and the runtime, so no one starves the others.
export const CONNECTIONS_SHARE_OF_FILES = 0.8
export const WEBHOOKS_SHARE_OF_FILES = 0.1

/** `wanted`, lowered (to at least 1) to `share` of the open-file limit when the limit is known. */
export function withinFiles (wanted: number, openFiles: number | undefined, share: number): number {
  return openFiles === undefined ? wanted : Math.max(1, Math.min(wanted, Math.floor(openFiles * share)))
}
