import type { KeyObject } from 'node:crypto'
import { isIP } from 'node:net'
import { Agent, buildConnector, type Dispatcher } from 'undici'
import { AddressRefused, type AddressPolicy } from './address-policy.ts'
import { failureKind } from './failure-kind.ts'
import { ReceiveBudget, ReceiveBudgetExceeded } from './receive-budget.ts'
import { sign } from './signature.ts'

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
  /** Why it failed, as the delivery log shows it: the kind of problem, never a peer's addresses or certificate names. */
  error?: string
  /** The failure in full, for the operator's log only. */
  detail?: string
}

// A receiver's answer is only drained for reuse; past these bytes or pieces (chunks or
// reads: tiny chunks with huge extensions) the connection is dropped instead.
const MAX_ANSWER_BYTES = 64 * 1024
const MAX_ANSWER_PIECES = 16
// Interim (1xx) answers before the final one: endless 103s would hold a core.
const MAX_INTERIM_ANSWERS = 8
// An idle connection closes after this, whatever Keep-Alive: timeout the receiver asks.
const KEEP_ALIVE_MAX_MS = 10_000
// A failure's detail is a peer's words: bounded, and without control characters, in the log.
const MAX_DETAIL_LENGTH = 500

class TimedOut extends Error {}
/** The service cut the answer off: its message says why, and names nothing of the peer's. */
class CutOff extends Error {}

/**
 * Signed POST attempts: only a 2xx within the timeout acknowledges (no redirects). Every
 * connection is checked against the policy, the address actually connected to included.
 */
export class Sender {
  readonly #policy: AddressPolicy
  readonly #timeoutMs: number
  readonly #agent: Agent
  readonly #budget = new ReceiveBudget()
  #closed = false

  constructor (policy: AddressPolicy, timeoutMs: number) {
    this.#policy = policy
    this.#timeoutMs = timeoutMs
    const connect = buildConnector({ lookup: policy.lookup, timeout: timeoutMs })
    this.#agent = new Agent({
      // The dispatcher bounds attempts per subscription, so none here (subscriptions to
      // one host must not queue); one request per connection, so a hang holds one attempt.
      connections: null,
      pipelining: 1,
      keepAliveMaxTimeout: KEEP_ALIVE_MAX_MS,
      connect: (options, callback) => {
        connect(options, (err, socket) => {
          if (err !== null) return callback(err, null)
          try {
            policy.allow(socket.remoteAddress ?? '', options.hostname)
          } catch (refused) {
            socket.destroy()
            return callback(refused as Error, null)
          }
          this.#budget.watch(socket)
          callback(null, socket)
        })
      }
    })
  }

  async send ({ url, key, id, payload }: Attempt): Promise<AttemptResult> {
    let target: URL
    try {
      // A stored URL that no longer parses fails that subscription, not the process.
      target = new URL(url)
      // Checked again: the service may have been started since with a stricter policy.
      this.#policy.allowProtocol(target.protocol)
      const host = target.hostname.replace(/^\[(.*)\]$/, '$1')
      if (isIP(host) !== 0) this.#policy.allow(host)
    } catch (err) {
      return { delivered: false, ...this.#describe(err) }
    }
    const timestamp = Math.floor(Date.now() / 1000)
    return await new Promise<AttemptResult>((resolve) => {
      this.#agent.dispatch({
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'plant-store-webhooks/1.0.0',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': sign(key, id, timestamp, payload)
        },
        body: payload
      }, new AttemptHandler(this.#timeoutMs, resolve, (err) => this.#describe(err)))
    })
  }

  /** Ends every connection, those of attempts still running too. */
  close (): void {
    this.#closed = true
    this.#agent.destroy().catch(() => {})
    this.#budget.close()
  }

  /** What the delivery log says of a failure (its kind), and what only the log does (the peer's own words). */
  #describe (err: unknown): { error: string, detail?: string } {
    if (err instanceof TimedOut) return { error: `no answer within ${this.#timeoutMs} ms` }
    if (this.#closed) return { error: 'cut off: the service shut down before an answer came' }
    if (err instanceof AddressRefused) return { error: err.message, detail: err.detail }
    if (err instanceof CutOff || err instanceof ReceiveBudgetExceeded) return { error: err.message }
    const { code, message } = err as NodeJS.ErrnoException
    // eslint-disable-next-line no-control-regex
    const text = (code === undefined ? message : `${code}: ${message}`).replace(/[\u0000-\u001f\u007f]/g, ' ')
    return { error: failureKind(code, this.#timeoutMs), detail: text.length > MAX_DETAIL_LENGTH ? `${text.slice(0, MAX_DETAIL_LENGTH)}…` : text }
  }
}

/**
 * One attempt's undici handler: the status decides, told once the body is drained (or
 * dropped), so a slot is never freed while its connection is busy. One deadline covers both.
 */
class AttemptHandler implements Dispatcher.DispatchHandler {
  readonly #resolve: (result: AttemptResult) => void
  readonly #describe: (err: unknown) => { error: string, detail?: string }
  readonly #timer: NodeJS.Timeout
  #controller: Dispatcher.DispatchController | undefined
  #timedOut = false
  /** What the status said, told once the body is drained. */
  #result: AttemptResult | undefined
  #interim = 0
  #bytes = 0
  #pieces = 0

  constructor (timeoutMs: number, resolve: (result: AttemptResult) => void, describe: (err: unknown) => { error: string, detail?: string }) {
    this.#resolve = resolve
    this.#describe = describe
    this.#timer = setTimeout(() => {
      this.#timedOut = true
      this.#controller?.abort(new TimedOut())
    }, timeoutMs)
  }

  onRequestStart (controller: Dispatcher.DispatchController): void {
    this.#controller = controller
    // undici cannot abort before the request starts: a deadline passed while connecting ends it here.
    if (this.#timedOut) controller.abort(new TimedOut())
  }

  onResponseStart (controller: Dispatcher.DispatchController, statusCode: number): void {
    if (statusCode < 200) {
      // Informational: the answer is still to come.
      if (++this.#interim > MAX_INTERIM_ANSWERS) controller.abort(new CutOff(`more than ${MAX_INTERIM_ANSWERS} interim (1xx) answers`))
      return
    }
    const redirect = statusCode >= 300 && statusCode < 400
    this.#result = { delivered: statusCode >= 200 && statusCode < 300, statusCode, ...redirect ? { error: 'redirects are not followed' } : {} }
  }

  onResponseData (controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#bytes += chunk.length
    if (this.#bytes > MAX_ANSWER_BYTES || ++this.#pieces > MAX_ANSWER_PIECES) controller.abort(new CutOff('the answer is too long'))
  }

  onResponseEnd (): void {
    clearTimeout(this.#timer)
    this.#resolve(this.#result!)
  }

  onResponseError (_controller: Dispatcher.DispatchController, err: Error): void {
    clearTimeout(this.#timer)
    // After the status, a bad body only loses the connection; a flood fails the attempt,
    // so the breaker pauses the receiver.
    const flood = err instanceof ReceiveBudgetExceeded
    this.#resolve(this.#result !== undefined && !flood ? this.#result : { ...this.#result, delivered: false, ...this.#describe(err) })
  }
}
