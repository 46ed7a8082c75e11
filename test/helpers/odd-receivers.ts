import { createServer as createHttpServer, type ServerResponse } from 'node:http'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect, createServer as createNetServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { retryUntil } from './wait.ts'

// Receivers for what startReceiver (receiver.ts) cannot do, for the delivery tests: a port
// that refuses or never accepts, a handler of the test's own, answers only raw sockets give.

/** A port of 127.0.0.1 that nothing listens on (it did a moment ago). */
export async function deadPort (): Promise<number> {
  const server = createNetServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * A port of 127.0.0.1 whose connections never complete: a process listens on it with the
 * shortest backlog and never accepts, and two connections fill its queue, so the kernel
 * drops every further SYN and a connect waits, as one to a host that has gone does.
 */
export async function blackHole (t: Test): Promise<number> {
  const child = spawn(process.execPath, ['-e', `
    const server = require('node:net').createServer()
    server.listen({ port: 0, host: '127.0.0.1', backlog: 0 }, () => {
      console.log(server.address().port)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000)
    })`], { stdio: ['ignore', 'pipe', 'inherit'] })
  const fillers: Socket[] = []
  t.teardown(() => {
    for (const socket of fillers) socket.destroy()
    child.kill('SIGKILL')
  })
  const [line] = await once(child.stdout!, 'data') as [Buffer]
  const port = Number(line.toString())
  for (let i = 0; i < 2; i++) fillers.push(connect(port, '127.0.0.1').on('error', () => {}))
  // Until a connect no longer completes.
  const { value: full } = await retryUntil(async () => await new Promise<boolean>((resolve) => {
    const probe = connect(port, '127.0.0.1')
    fillers.push(probe.on('error', () => {}))
    probe.on('connect', () => resolve(false))
    setTimeout(() => resolve(true), 200)
  }), (full) => full, 5000, 0)
  t.ok(full, 'a connect to the port no longer completes')
  return port
}

/**
 * A receiver on raw sockets, for answers no HTTP server would give: `answer` is called
 * with each connection once a request has arrived on it. Counts the connections open at
 * once, at most.
 */
export async function rawReceiver (t: Test, answer: (socket: Socket) => void): Promise<{ url: string, mostOpen: () => number }> {
  const sockets = new Set<Socket>()
  let most = 0
  const listener = createNetServer((socket) => {
    sockets.add(socket)
    most = Math.max(most, sockets.size)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
    socket.once('data', () => answer(socket))
  })
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => listener.close(() => resolve()))
  })
  return { url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/hooks`, mostOpen: () => most }
}

/** Writes `chunk` for as long as the connection takes it. */
export function flood (socket: Socket, chunk: string): void {
  const pump = (): void => { while (socket.writable && socket.write(chunk)); }
  socket.on('drain', pump)
  pump()
}

/** A local HTTP server on 127.0.0.1 whose handler gets each request's path and body and answers as it likes (or never). */
export async function startServer (
  t: Test,
  handle: (path: string, body: string, response: ServerResponse) => void
): Promise<{ url: string, close: () => Promise<void> }> {
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => handle(request.url ?? '', Buffer.concat(chunks).toString('utf8'), response))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  let closing: Promise<void> | undefined
  const close = async (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
    await closing
  }
  t.teardown(close)
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close }
}
