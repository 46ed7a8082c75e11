import { createHash, randomBytes } from 'node:crypto'
import { renameSync, writeFileSync } from 'node:fs'
import type { Scope } from '../../schemas/scopes.ts'

/** A token as a test knows it: its value, and what the tokens file says of it. */
export interface TestToken {
  name: string
  value: string
  scopes: Scope[]
  expiresAt?: string
}

export function testToken (name: string, scopes: Scope[], expiresAt?: string): TestToken {
  return { name, value: randomBytes(32).toString('base64url'), scopes, ...(expiresAt === undefined ? {} : { expiresAt }) }
}

/** The token's entry in a tokens file, its SHA-256 computed here rather than by the service. */
export function entryOf ({ name, value, scopes, expiresAt }: TestToken): Record<string, unknown> {
  return { name, sha256: createHash('sha256').update(value).digest('hex'), scopes, ...(expiresAt === undefined ? {} : { expiresAt }) }
}

/**
 * Writes a tokens file whole, renamed into place as an operator's tool would (a reload
 * never reads half a file), and returns its path. `content` as it is when a string.
 */
export function writeTokens (path: string, content: TestToken[] | string): string {
  writeFileSync(`${path}.tmp`, typeof content === 'string' ? content : JSON.stringify(content.map(entryOf)), { mode: 0o600 })
  renameSync(`${path}.tmp`, path)
  return path
}

const SUBSCRIPTION = `/webhooks/wh_${'0'.repeat(32)}`

/**
 * Every guarded operation, HEAD with each GET, and the one scope it needs: `path` as the
 * document names it, `url` a request to it, `payload` a body it accepts.
 */
export const GUARDED: Array<{ method: string, path: string, url: string, scope: Scope, payload?: unknown }> = [
  { method: 'GET', path: '/plants', url: '/plants', scope: 'plants:read' },
  { method: 'HEAD', path: '/plants', url: '/plants', scope: 'plants:read' },
  { method: 'GET', path: '/plants/changes', url: '/plants/changes', scope: 'plants:read' },
  { method: 'HEAD', path: '/plants/changes', url: '/plants/changes', scope: 'plants:read' },
  { method: 'GET', path: '/plants/{id}', url: '/plants/1', scope: 'plants:read' },
  { method: 'HEAD', path: '/plants/{id}', url: '/plants/1', scope: 'plants:read' },
  { method: 'POST', path: '/plants', url: '/plants', scope: 'plants:write', payload: { id: 1, name: 'Basil' } },
  { method: 'PUT', path: '/plants/{id}', url: '/plants/1', scope: 'plants:write', payload: { name: 'Basil' } },
  { method: 'DELETE', path: '/plants/{id}', url: '/plants/1', scope: 'plants:write' },
  // An address literal: refused (400) without a DNS lookup, once the scope has let it through.
  { method: 'POST', path: '/webhooks', url: '/webhooks', scope: 'webhooks:manage', payload: { url: 'https://127.0.0.1/' } },
  { method: 'GET', path: '/webhooks', url: '/webhooks', scope: 'webhooks:manage' },
  { method: 'HEAD', path: '/webhooks', url: '/webhooks', scope: 'webhooks:manage' },
  { method: 'GET', path: '/webhooks/{id}', url: SUBSCRIPTION, scope: 'webhooks:manage' },
  { method: 'HEAD', path: '/webhooks/{id}', url: SUBSCRIPTION, scope: 'webhooks:manage' },
  { method: 'DELETE', path: '/webhooks/{id}', url: SUBSCRIPTION, scope: 'webhooks:manage' },
  { method: 'GET', path: '/webhooks/{id}/deliveries', url: `${SUBSCRIPTION}/deliveries`, scope: 'webhooks:manage' },
  { method: 'HEAD', path: '/webhooks/{id}/deliveries', url: `${SUBSCRIPTION}/deliveries`, scope: 'webhooks:manage' },
  {
    method: 'POST',
    path: '/webhooks/{id}/deliveries/{deliveryId}/retry',
    url: `${SUBSCRIPTION}/deliveries/msg_${'0'.repeat(32)}/retry`,
    scope: 'webhooks:manage'
  },
  { method: 'POST', path: '/webhooks/{id}/enable', url: `${SUBSCRIPTION}/enable`, scope: 'webhooks:manage' },
  { method: 'GET', path: '/metrics', url: '/metrics', scope: 'metrics:read' },
  { method: 'HEAD', path: '/metrics', url: '/metrics', scope: 'metrics:read' }
]
