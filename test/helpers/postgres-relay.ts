import { connect as tcpConnect, createServer, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'

/**
 * A TCP relay to PostgreSQL that can freeze: connections stay open but nothing passes
 * either way, as when the network drops every packet or the server hangs.
 */
export async function startRelay (t: Test, target: string): Promise<{ url: string, freeze: () => void, thaw: () => void }> {
  const to = new URL(target)
  const sockets = new Set<Socket>()
  let frozen = false
  const relay = createServer((client) => {
    const upstream = tcpConnect(Number(to.port), to.hostname)
    for (const [from, into] of [[client, upstream], [upstream, client]]) {
      sockets.add(from)
      if (frozen) from.pause()
      from.on('data', (chunk) => into.write(chunk))
      from.on('error', () => {})
      from.on('close', () => {
        sockets.delete(from)
        into.destroy()
      })
    }
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => relay.close(resolve))
  })
  const url = new URL(target)
  url.port = String((relay.address() as { port: number }).port)
  return {
    url: url.href,
    freeze: () => {
      frozen = true
      for (const socket of sockets) socket.pause()
    },
    thaw: () => {
      frozen = false
      for (const socket of sockets) socket.resume()
    }
  }
}

/**
 * Calls `attempt` every 100 ms until `done` accepts its value or `timeoutMs` have passed;
 * returns the last value and how long it took.
 */
export async function retryUntil<T> (attempt: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<{ value: T, ms: number }> {
  const started = Date.now()
  for (;;) {
    const value = await attempt()
    const ms = Date.now() - started
    if (done(value) || ms > timeoutMs) return { value, ms }
    await sleep(100)
  }
}
