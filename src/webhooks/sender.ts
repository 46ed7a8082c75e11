import type { KeyObject } from 'node:crypto'
import http from 'node:http'
import https from 'node:https'
import { isIP, type Socket } from 'node:net'
import { AddressRefused, type AddressPolicy } from './address-policy.js'
import { sign } from './signature.js'

export interface Attempt {
  url: string
  /** The subscription's signing key (signingKey). */
  key: KeyObject
  /** The delivery's id: the webhook-id header, the same on every attempt. */
  id: string
  payload: Buffer
}

export interface AttemptResult {
  delivered: boolean
  statusCode?: number
  error?: string
}

// A receiver's answer is not read, only drained so the connection can be used again;
// past this many bytes the connection is dropped instead.
const MAX_ANSWER_BYTES = 64 * 1024
// What a failure is recorded as is a peer's words: bounded, and without control characters.
const MAX_ERROR_LENGTH = 200

class TimedOut extends Error {}

/**
 * Makes one delivery attempt: a signed POST of the payload. A 2xx status within the
 * timeout acknowledges it; anything else, a redirect included (never followed), does
 * not. Connections are kept alive and reused, and every new one is made only to an
 * address the policy allows: a name is resolved through the policy's lookup, an address
 * written in the URL is checked before connecting, and the address actually connected
 * to is checked again.
 */
export class Sender {
  readonly #policy: AddressPolicy
  readonly #timeoutMs: number
  readonly #agents: { 'http:': http.Agent, 'https:': https.Agent }
  #closed = false

  constructor (policy: AddressPolicy, timeoutMs: number) {
    this.#policy = policy
    this.#timeoutMs = timeoutMs
    // No socket limit of the agents' own: the dispatcher bounds the attempts of each
    // subscription, and subscriptions to one host must not queue behind each other.
    const options = { keepAlive: true, maxSockets: Infinity, scheduling: 'lifo' as const, lookup: policy.lookup }
    this.#agents = { 'http:': new http.Agent(options), 'https:': new https.Agent(options) }
  }

  async send ({ url, key, id, payload }: Attempt): Promise<AttemptResult> {
    const target = new URL(url)
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1')
    try {
      // Checked again: the service may have been started since with a stricter policy.
      this.#policy.allowProtocol(target.protocol)
      if (isIP(host) !== 0) this.#policy.allow(host)
    } catch (err) {
      return { delivered: false, error: this.#describe(err) }
    }
    const timestamp = Math.floor(Date.now() / 1000)
    const protocol = target.protocol === 'https:' ? 'https:' : 'http:'
    return await new Promise<AttemptResult>((resolve) => {
      let settled = false
      const settle = (result: AttemptResult): void => {
        if (settled) return
        settled = true
        resolve(result)
      }
      const request = (protocol === 'https:' ? https : http).request(target, {
        method: 'POST',
        agent: this.#agents[protocol],
        headers: {
          'content-type': 'application/json',
          'content-length': payload.length,
          'user-agent': 'plant-store-webhooks/1.0.0',
          'webhook-id': id,
          'webhook-timestamp': timestamp,
          'webhook-signature': sign(key, id, timestamp, payload)
        }
      })
      // Covers connecting, the answer's status and draining its body.
      const timer = setTimeout(() => request.destroy(new TimedOut()), this.#timeoutMs)
      request.on('socket', (socket: Socket) => {
        if (!socket.connecting) return // reused: checked when it connected
        socket.once('connect', () => {
          try {
            this.#policy.allow(socket.remoteAddress ?? '')
          } catch (err) {
            request.destroy(err as Error)
          }
        })
      })
      request.on('error', (err) => {
        clearTimeout(timer)
        settle({ delivered: false, error: this.#describe(err) })
      })
      request.on('response', (answer) => {
        const statusCode = answer.statusCode ?? 0
        const redirect = statusCode >= 300 && statusCode < 400
        settle({ delivered: statusCode >= 200 && statusCode < 300, statusCode, ...redirect ? { error: 'redirects are not followed' } : {} })
        let bytes = 0
        answer.on('data', (chunk: Buffer) => {
          bytes += chunk.length
          if (bytes > MAX_ANSWER_BYTES) answer.destroy()
        })
        answer.on('close', () => clearTimeout(timer))
        answer.on('error', () => {}) // the attempt is decided; a broken body only loses the connection
      })
      request.end(payload)
    })
  }

  /** Ends every connection, those of attempts still running too. */
  close (): void {
    this.#closed = true
    this.#agents['http:'].destroy()
    this.#agents['https:'].destroy()
  }

  #describe (err: unknown): string {
    if (err instanceof TimedOut) return `no answer within ${this.#timeoutMs} ms`
    if (this.#closed) return 'cut off: the service shut down before an answer came'
    if (err instanceof AddressRefused) return err.message
    const { code, message } = err as NodeJS.ErrnoException
    // eslint-disable-next-line no-control-regex
    const text = (code === undefined ? message : `${code}: ${message}`).replace(/[\u0000-\u001f\u007f]/g, ' ')
    return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text
  }
}
