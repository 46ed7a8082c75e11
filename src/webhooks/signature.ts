import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto'

// Standard Webhooks (https://www.standardwebhooks.com): a secret is `whsec_` and the
// base64 of its key; a signature is `v1,` and the base64 HMAC-SHA256, under that key,
// of `<webhook-id>.<webhook-timestamp>.<body>`.

const PREFIX = 'whsec_'
// 32 bytes: within the 24 to 64 the specification allows, and the size of the hash.
const KEY_BYTES = 32

export function newSecret (): string {
  return PREFIX + randomBytes(KEY_BYTES).toString('base64')
}

/**
 * The key a secret names, made once per subscription: an HMAC given the key's bytes
 * makes a key object of them each time, which costs seven times the signature itself.
 */
export function signingKey (secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret.slice(PREFIX.length), 'base64'))
}

/** The webhook-signature header of one attempt. */
export function sign (key: KeyObject, id: string, timestamp: number, body: Buffer): string {
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')
}
