import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import type { Test } from 'tap'
import { TOKEN } from './app.ts'

/** A change-feed stream on a raw socket: a reader that may read, stall, half-close or reset as a test tells it. */
export interface RawReader {
  socket: Socket
  /** Resolves with the answer's status once its head arrived. */
  status: Promise<number>
  /** Resolves once `bytes` have arrived (head included). */
  received: (bytes: number) => Promise<void>
  /** Resolves once the connection is closed, by either side. */
  closed: Promise<void>
}

/**
 * Opens `GET /plants/changes` with `Accept: text/event-stream` on its own connection to
 * `port`, reading as it arrives until paused (`socket.pause()`); destroyed when the test ends.
 */
export function openReader (t: Pick<Test, 'teardown'>, port: number, { query = '', method = 'GET', token = TOKEN } = {}): RawReader {
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  socket.write(`${method} /plants/changes${query} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`)
  let bytes = 0
  let head = ''
  const waiting = new Set<{ bytes: number, done: () => void }>()
  let answered!: (status: number) => void
  const status = new Promise<number>((resolve) => { answered = resolve })
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length
    if (head.length < 16) {
      head += chunk.toString('latin1', 0, 16)
      if (head.length >= 12) answered(Number(head.slice(9, 12)))
    }
    for (const wait of waiting) {
      if (bytes >= wait.bytes) {
        waiting.delete(wait)
        wait.done()
      }
    }
  })
  socket.on('error', () => {})
  const closed = once(socket, 'close').then(() => {
    answered(0)
    for (const wait of waiting) wait.done()
  })
  return {
    socket,
    status,
    received: async (wanted) => {
      if (bytes >= wanted || socket.destroyed) return
      await new Promise<void>((resolve) => waiting.add({ bytes: wanted, done: resolve }))
    },
    closed
  }
}
