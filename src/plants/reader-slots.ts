import { Overloaded, TooManyReaders, withHeaders } from '../http/errors.ts'

// A reader refused may come back once another ends; a second is short next to a wait.
const RETRY_AFTER = { 'retry-after': '1' }

export interface ReaderLimits {
  /** Readers waiting or streaming at once, every token together. */
  maxReaders: number
  /** The same, for one token. */
  maxReadersPerToken: number
}

/** Counts the change feed's waiting and streaming readers, in all and per token. */
export class ReaderSlots {
  readonly #limits: ReaderLimits
  readonly #byToken = new Map<string, number>()
  #total = 0

  constructor (limits: ReaderLimits) {
    this.#limits = limits
  }

  /** Takes a slot for the token, or throws the refusal to answer; returns its release, to call once. */
  take (token: string): () => void {
    const held = this.#byToken.get(token) ?? 0
    if (held >= this.#limits.maxReadersPerToken) throw withHeaders(new TooManyReaders(this.#limits.maxReadersPerToken), RETRY_AFTER)
    if (this.#total >= this.#limits.maxReaders) throw withHeaders(new Overloaded(), RETRY_AFTER)
    this.#byToken.set(token, held + 1)
    this.#total++
    let released = false
    return () => {
      if (released) return
      released = true
      this.#total--
      const left = this.#byToken.get(token)! - 1
      if (left === 0) this.#byToken.delete(token)
      else this.#byToken.set(token, left)
    }
  }
}
