/**
 * The webhook scenario's parts: a local receiver that acknowledges every delivery at
 * once, the subscription to it, and how many deliveries still wait, read from the
 * service's own metrics: creates with a subscriber are only as fast as they are if the
 * deliveries keep pace.
 */
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fail, TOKEN } from './settings.ts'

export interface Receiver {
  url: string
  /** Deliveries received so far. */
  received: () => number
  close: () => Promise<void>
}

export async function startReceiver (): Promise<Receiver> {
  let received = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      received++
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: () => received,
    close: async () => await new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}

async function call (port: number, method: string, path: string, body?: string): Promise<{ status: number, text: string }> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

export async function subscribe (port: number, url: string): Promise<void> {
  const { status, text } = await call(port, 'POST', '/webhooks', JSON.stringify({ url }))
  if (status !== 201) fail(`cannot subscribe the bench's receiver: ${status} ${text}`)
}

/** plant_store_webhook_deliveries_pending, as /metrics says it now. */
export async function pendingDeliveries (port: number): Promise<number> {
  const { status, text } = await call(port, 'GET', '/metrics')
  const line = text.split('\n').find((l) => l.startsWith('plant_store_webhook_deliveries_pending '))
  if (status !== 200 || line === undefined) fail(`cannot read the pending deliveries from /metrics: ${status}`)
  return Number(line.split(' ')[1])
}
