import type { EventEmitter } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import type { ChangeFeed, ChangeQuery, ChangeRead } from '../store/changes.ts'
import type { CommitEvents } from '../store/commits.ts'

// Another instance's commits are seen by polling the newest seq, one query for every
// waiter together, and only while someone waits.
const POLL_MS = 250

interface Waiter { known: number, done: () => void }

/**
 * Wakes the feed's waiting readers when an event commits: at once for this instance's
 * commits, within POLL_MS for another's. Readers at the same cursor share one read, so a
 * commit costs one read per distinct cursor, not one per reader.
 */
export class ChangeWatch {
  readonly #feed: ChangeFeed
  readonly #log: FastifyBaseLogger
  readonly #waiters = new Set<Waiter>()
  readonly #reads = new Map<string, Promise<ChangeRead>>()
  #poll: NodeJS.Timeout | undefined

  constructor (feed: ChangeFeed, commits: EventEmitter<CommitEvents>, log: FastifyBaseLogger) {
    this.#feed = feed
    this.#log = log
    commits.on('committed', ({ events }) => { if (events > 0) this.#wake(Number.MAX_SAFE_INTEGER) })
  }

  /** The feed after the cursor; readers asking the same at once share the read. */
  async read (query: ChangeQuery): Promise<ChangeRead> {
    const key = `${query.after ?? ''}/${query.limit}/${query.bytes}`
    let read = this.#reads.get(key)
    if (read === undefined) {
      read = this.#feed.read(query).finally(() => this.#reads.delete(key))
      this.#reads.set(key, read)
    }
    return await read
  }

  /** Resolves once an event newer than `known` may have committed, after `ms`, or at `signal`. */
  async next (known: number, ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return
    let waiter: Waiter | undefined
    try {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms)
        signal.addEventListener('abort', done, { once: true })
        waiter = { known, done }
        this.#waiters.add(waiter)
        this.#poll ??= setInterval(() => { this.#check() }, POLL_MS).unref()
        function done (): void {
          clearTimeout(timer)
          signal.removeEventListener('abort', done)
          resolve()
        }
      })
    } finally {
      this.#waiters.delete(waiter!)
      if (this.#waiters.size === 0) {
        clearInterval(this.#poll)
        this.#poll = undefined
      }
    }
  }

  #check (): void {
    this.#feed.latest().then((latest) => this.#wake(latest), (err: unknown) => {
      this.#log.debug({ err }, 'change feed: cannot read the newest event; waiting readers are woken by their timeout')
    })
  }

  /** Wakes the readers that know less than `latest`. */
  #wake (latest: number): void {
    for (const waiter of this.#waiters) if (waiter.known < latest) waiter.done()
  }
}
