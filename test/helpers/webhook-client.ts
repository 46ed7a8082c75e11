import type { Test } from 'tap'
import type { Received } from './receiver.ts'
import type { RunningServer } from './server.ts'

/** What a test keeps of a subscription: its id, and the secret to verify with. */
export interface Subscription { id: string, secret: string }

export const webhookId = (received: Received): string => String(received.headers['webhook-id'])

/** POST /webhooks on a running service, asserting the 201. */
export async function subscribe (t: Test, server: RunningServer, url: string): Promise<Subscription> {
  const res = await server.request('POST', '/webhooks', { body: { url } })
  t.equal(res.statusCode, 201, 'subscribed')
  const { id, secret } = res.json()
  return { id, secret }
}

/** Every entry of a subscription's delivery log, following its Link header; plantId kept as the exact text. */
export async function deliveryLog (server: RunningServer, id: string): Promise<Array<Record<string, any>>> {
  const all: Array<Record<string, any>> = []
  let path: string | undefined = `/webhooks/${id}/deliveries?limit=100`
  while (path !== undefined) {
    const res = await server.request('GET', path)
    if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${res.body}`)
    all.push(...JSON.parse(res.body.replace(/"plantId":(\d+)/g, '"plantId":"$1"')))
    path = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? '')?.[1]
  }
  return all
}
