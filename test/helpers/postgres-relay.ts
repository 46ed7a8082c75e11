import { connect as tcpConnect, createServer, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { testApp } from './app.ts'

export interface Relay {
  url: string
  freeze: () => void
  thaw: () => void
  /**
   * Ends every connection as PostgreSQL's fast shutdown does: a FATAL 57P01 error, sent in
   * the same packet as the answer to the statement in flight, then the connection closed.
   * A connection that answers no statement within IDLE_END_MS is ended then. Connections
   * made after that go through: the server is back at once.
   */
  terminate: () => void
  /**
   * Ends the next `count` connections as PostgreSQL's idle_session_timeout does when the
   * service reads late: the end of their start (ReadyForQuery) and a FATAL 57P05 arrive
   * in one packet, before the service has sent anything on them.
   */
  endAtStart: (count: number) => void
}

// PostgreSQL's ErrorResponse for a fast shutdown, as each backend sends it.
const FATAL_SHUTDOWN = errorResponse({ S: 'FATAL', V: 'FATAL', C: '57P01', M: 'terminating connection due to administrator command' })
// PostgreSQL's ErrorResponse for a session ended at its idle_session_timeout.
const FATAL_IDLE = errorResponse({ S: 'FATAL', V: 'FATAL', C: '57P05', M: 'terminating connection due to idle-session timeout' })
// After terminate, a connection that has answered no statement within this long is idle, and ended.
const IDLE_END_MS = 200

/** An app (testApp, with `env`) that reaches the database at `target` through a relay. */
export async function appBehindRelay (t: Test, target: string, env: NodeJS.ProcessEnv = {}): Promise<{ app: FastifyInstance, relay: Relay }> {
  const relay = await startRelay(t, target)
  return { app: await testApp(t, { ...env, DATABASE_URL: relay.url }), relay }
}

/**
 * A TCP relay to PostgreSQL that can freeze (connections stay open but nothing passes
 * either way, as when the network drops every packet or the server hangs) or end every
 * connection as a fast shutdown does.
 */
export async function startRelay (t: Test, target: string): Promise<Relay> {
  const to = new URL(target)
  const sockets = new Set<Socket>()
  // The server's side of each connection, with a way to end it as a shutdown does.
  const ending = new Map<Socket, () => void>()
  let frozen = false
  let terminating = false
  let endingAtStart = 0
  const relay = createServer((client) => {
    const upstream = tcpConnect(Number(to.port), to.hostname)
    let endAtStart = endingAtStart > 0
    if (endAtStart) endingAtStart--
    const end = (chunk: Buffer = Buffer.alloc(0)): void => {
      ending.delete(upstream)
      client.end(Buffer.concat([chunk, FATAL_SHUTDOWN]))
      upstream.destroy()
    }
    ending.set(upstream, end)
    for (const [from, into] of [[client, upstream], [upstream, client]]) {
      sockets.add(from)
      if (frozen) from.pause()
      from.on('data', (chunk: Buffer) => {
        if (endAtStart && from === upstream && readyForQuery(chunk)) {
          endAtStart = false
          client.end(Buffer.concat([chunk, FATAL_IDLE]))
          upstream.destroy()
        } else if (terminating && from === upstream && readyForQuery(chunk)) end(chunk)
        else into.write(chunk)
      })
      from.on('error', () => {})
      from.on('close', () => {
        sockets.delete(from)
        ending.delete(from)
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
    },
    terminate: () => {
      terminating = true
      const open = [...ending.keys()]
      setTimeout(() => {
        for (const upstream of open) ending.get(upstream)?.()
        terminating = false
      }, IDLE_END_MS)
    },
    endAtStart: (count) => { endingAtStart = count }
  }
}

/** True when a chunk from the server ends with ReadyForQuery ('Z', length 5, status): a statement's answer is complete. */
function readyForQuery (chunk: Buffer): boolean {
  return chunk.length >= 6 && chunk[chunk.length - 6] === 0x5a && chunk.readInt32BE(chunk.length - 5) === 5
}

/** A PostgreSQL ErrorResponse message with these fields. */
function errorResponse (fields: Record<string, string>): Buffer {
  const body = Buffer.concat([...Object.entries(fields).map(([type, value]) => Buffer.from(`${type}${value}\0`)), Buffer.from([0])])
  const header = Buffer.alloc(5)
  header.write('E')
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}
