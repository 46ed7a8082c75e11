import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import { retryUntil } from './wait.ts'

/** One request a receiver got, as it arrived. */
export interface Received {
  headers: IncomingHttpHeaders
  /** The raw body: ids beyond 2^53 are read from here, never from a parsed copy. */
  body: string
  /** The answer it was given. */
  status: number
}

/** How a receiver answers the nth request (0-based): a status, or 'hang' to never answer. */
export type Answering = (n: number, request: Omit<Received, 'status'>) => number | 'hang'

export interface Receiver {
  /** The URL to subscribe, on 127.0.0.1: subscribing it needs WEBHOOK_ALLOW_PRIVATE=true. */
  url: string
  received: Received[]
  /** Changes how the next requests are answered. */
  answer: (answering: Answering) => void
  /** Resolves once `count` requests have arrived; rejects after timeoutMs. */
  waitFor: (count: number, timeoutMs?: number) => Promise<Received[]>
  /** The body verified against the secret with the standardwebhooks package; throws when it does not verify. */
  verify: (secret: string, received: Received) => void
  close: () => Promise<void>
}

/**
 * A real webhook receiver: an HTTP server on a free port of 127.0.0.1 that records every
 * request and answers as told (200 unless told otherwise). Closed when the test ends.
 */
export async function startReceiver (t: Pick<Test, 'teardown'>, answering: Answering = () => 200): Promise<Receiver> {
  const received: Received[] = []
  const hanging = new Set<ServerResponse>()
  let answer = answering
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const arrived = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8') }
      const status = answer(received.length, arrived)
      received.push({ ...arrived, status: status === 'hang' ? 0 : status })
      if (status === 'hang') {
        hanging.add(response)
        return
      }
      response.statusCode = status
      if (status >= 300 && status < 400) response.setHeader('location', 'http://127.0.0.1:1/elsewhere')
      response.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const close = async (): Promise<void> => {
    for (const response of hanging) response.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.teardown(close)
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    answer: (answering) => { answer = answering },
    waitFor: async (count, timeoutMs = 10_000) => {
      const { value } = await retryUntil(async () => received.length, (n) => n >= count, timeoutMs, 10)
      if (value < count) throw new Error(`the receiver got ${value} requests, not ${count}, within ${timeoutMs} ms`)
      return received
    },
    verify: (secret, { headers, body }) => {
      new Webhook(secret).verify(body, headers as Record<string, string>)
    },
    close
  }
}
