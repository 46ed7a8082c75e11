import { createHmac, randomBytes } from 'node:crypto'

// Standard Webhooks (https://www.standardwebhooks.com): a secret is `whsec_` and the
// base64 of its key; a signature is `v1,` and the base64 HMAC-SHA256, under that key,
// of `<webhook-id>.<webhook-timestamp>.<body>`.

const PREFIX = 'whsec_'
// 32 bytes: within the 24 to 64 the specification allows, and the size of the hash.
const KEY_BYTES = 32

export function newSecret (): string {
  return PREFIX + randomBytes(KEY_BYTES).toString('base64')
}

/** The webhook-signature header of one attempt. */
export function sign (secret: string, id: string, timestamp: number, body: Buffer): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64')
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')
}
