import type { AddressInfo } from 'node:net'
import type { Config } from '../config.ts'
import { VERSION } from './project.ts'
import { storeLocation } from '../store/location.ts'

/** The line logged once listening (version, Node, store, address, docs), as fields and as a sentence. */
export function startLine (config: Config, bound: AddressInfo): [Record<string, string>, string] {
  const address = bound.family === 'IPv6' ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`
  const fields = {
    version: VERSION,
    node: process.version,
    store: config.database.engine,
    database: storeLocation(config.database),
    address,
    docs: `http://${reachable(bound)}:${bound.port}/docs`
  }
  const store = fields.store === fields.database ? fields.store : `${fields.store} ${fields.database}`
  return [fields, `plant-store ${VERSION} on Node ${process.version} listening on ${address}, store ${store}, docs at ${fields.docs}`]
}

// Bound to every interface: the loopback address is one a person can open.
function reachable ({ address, family }: AddressInfo): string {
  if (address === '0.0.0.0') return '127.0.0.1'
  if (address === '::') return '[::1]'
  return family === 'IPv6' ? `[${address}]` : address
}
