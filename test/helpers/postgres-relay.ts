import { connect as tcpConnect, createServer, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { testApp } from './app.js'

export interface Relay {
  url: string
  freeze: () => void
  thaw: () => void
}

/** An app (testApp, with `env`) that reaches the database at `target` through a relay. */
export async function appBehindRelay (t: Test, target: string, env: NodeJS.ProcessEnv = {}): Promise<{ app: FastifyInstance, relay: Relay }> {
  const relay = await startRelay(t, target)
  return { app: await testApp(t, { ...env, DATABASE_URL: relay.url }), relay }
}

/**
 * A TCP relay to PostgreSQL that can freeze: connections stay open but nothing passes
 * either way, as when the network drops every packet or the server hangs.
 */
async function startRelay (t: Test, target: string): Promise<Relay> {
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
