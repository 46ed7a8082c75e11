import type { KeyObject } from 'node:crypto'
import { isIP } from 'node:net'
import { Agent, buildConnector, request } from 'undici'
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
 * not. Connections are kept alive and reused (undici: about half the CPU of `node:http`
 * for an attempt), and every new one is made only to an address the policy allows: a
 * name is resolved through the policy's lookup, an address written in the URL is checked
 * before connecting, and the address actually connected to is checked again before the
 * request is written.
 */
export class Sender {
  readonly #policy: AddressPolicy
  readonly #timeoutMs: number
  readonly #agent: Agent
  #closed = false

  constructor (policy: AddressPolicy, timeoutMs: number) {
    this.#policy = policy
    this.#timeoutMs = timeoutMs
    const connect = buildConnector({ lookup: policy.lookup, timeout: timeoutMs })
    this.#agent = new Agent({
      // No connection limit of the agent's own (connections: null): the dispatcher bounds
      // the attempts of each subscription, and subscriptions to one host must not queue
      // behind each other. One request at a time on a connection: a receiver that hangs
      // holds up only its own attempt.
      connections: null,
      pipelining: 1,
      connect: (options, callback) => {
        connect(options, (err, socket) => {
          if (err !== null) return callback(err, null)
          try {
            policy.allow(socket.remoteAddress ?? '')
          } catch (refused) {
            socket.destroy()
            return callback(refused as Error, null)
          }
          callback(null, socket)
        })
      }
    })
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
    // Covers connecting, the answer's status and draining its body.
    const deadline = new AbortController()
    const timer = setTimeout(() => deadline.abort(new TimedOut()), this.#timeoutMs)
    let answer
    try {
      answer = await request(target, {
        dispatcher: this.#agent,
        method: 'POST',
        signal: deadline.signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'plant-store-webhooks/1.0.0',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': sign(key, id, timestamp, payload)
        },
        body: payload
      })
    } catch (err) {
      clearTimeout(timer)
      return { delivered: false, error: this.#describe(err) }
    }
    // The attempt is decided by its status; a broken or oversized body (dump destroys it
    // past its limit) only loses the connection.
    answer.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => {}).finally(() => clearTimeout(timer))
    const { statusCode } = answer
    const redirect = statusCode >= 300 && statusCode < 400
    return { delivered: statusCode >= 200 && statusCode < 300, statusCode, ...redirect ? { error: 'redirects are not followed' } : {} }
  }

  /** Ends every connection, those of attempts still running too. */
  close (): void {
    this.#closed = true
    this.#agent.destroy().catch(() => {})
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
