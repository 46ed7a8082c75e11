import type { Socket } from 'node:net'

// How much a receiver may send on one connection between two sweeps: far beyond any
// honest answer (an acknowledgement is a few hundred bytes, a body is drained up to 64
// KiB), far below a flood.
const BYTES_PER_SWEEP = 1024 * 1024
const SWEEP_MS = 100

/** A receiver sent more than its connection's budget: a flood, cut off. */
export class ReceiveBudgetExceeded extends Error {
  constructor () {
    super(`the receiver sent more than ${BYTES_PER_SWEEP / 1024 / 1024} MiB within ${SWEEP_MS} ms`)
  }
}

/**
 * Cuts a connection to a receiver that sends more than BYTES_PER_SWEEP between two sweeps:
 * undici parses some input unseen (an endless reason phrase, chunk extensions), which held a core.
 */
export class ReceiveBudget {
  readonly #counted = new Map<Socket, number>()
  #timer: NodeJS.Timeout | undefined

  watch (socket: Socket): void {
    this.#counted.set(socket, socket.bytesRead)
    socket.once('close', () => {
      this.#counted.delete(socket)
      if (this.#counted.size === 0) this.close()
    })
    this.#timer ??= setInterval(() => { this.#sweep() }, SWEEP_MS).unref()
  }

  close (): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }

  #sweep (): void {
    for (const [socket, before] of this.#counted) {
      const read = socket.bytesRead
      if (read - before > BYTES_PER_SWEEP) socket.destroy(new ReceiveBudgetExceeded())
      else this.#counted.set(socket, read)
    }
  }
}
