import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { Agent, fetch } from 'undici'
import { TOKEN } from './app.ts'
import { retryUntil } from './wait.ts'

/** A running service's answer, read to the end: the shape of an in-process app's, and how long it took. */
export interface Answer {
  statusCode: number
  headers: Record<string, string>
  body: string
  json: <T = any>() => T
  ms: number
}

export interface RequestOptions {
  /** A string or Buffer is sent as it is, anything else as JSON; either as application/json. */
  body?: unknown
  /** The bearer token: the test token by default, null for none. */
  token?: string | null
  headers?: Record<string, string>
}

export interface SendOptions {
  /** Milliseconds between one chunk and the next. */
  gapMs?: number
  /** Awaited before each chunk after the first, after the gap: the next chunk waits for what the test says. */
  next?: () => Promise<unknown>
  /** Called with everything received so far: true closes the connection. */
  until?: (text: string) => boolean
  /** Closes the connection when aborted. */
  signal?: AbortSignal
  /** Ends the sending side after the last chunk (a half-close, as `nc` does at the end of its input). */
  halfClose?: boolean
}

export interface RunningServer {
  url: string
  child: ChildProcess
  /** Every line the process wrote to stdout (its JSON logs) and stderr, so far. */
  stdout: string[]
  stderr: string[]
  exited: Promise<number | null>
  /** The one way to call the service over HTTP. Rejects when no answer comes (the process died). */
  request: (method: string, path: string, options?: RequestOptions) => Promise<Answer>
  /**
   * The one raw-socket client: connects, writes the chunks as they are, `gapMs` apart,
   * and resolves once the connection closes with everything received, how long it stayed
   * open and how many chunks were written before it closed. The connection is closed when
   * the test ends.
   */
  send: (chunks: Array<string | Uint8Array>, options?: SendOptions) => Promise<{ text: string, ms: number, sent: number }>
}

/** The head of a POST /plants with the test token that announces a 100-byte JSON body. */
export const CREATE_HEAD = `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`

/**
 * The Node flags a test runs a TypeScript program of the project with, as a process: tap's
 * (types stripped, coverage counted), but not its module mocking, which no such program uses
 * and whose hooks cost a fifth of a service's start.
 */
export const NODE_ARGS = process.execArgv.filter((arg) => !arg.includes('@tapjs/mock'))

const SERVER = new URL('../../src/server.ts', import.meta.url).pathname
// An idle connection is the client's to close: a test's next request on one the service closed
// that instant fails, and a loaded machine's lag makes that instant likely. The client gives an
// idle connection half a second; the service, a minute (tests of the setting set their own).
const CHILD_ENV = { HOST: '127.0.0.1', PORT: '0', DATABASE_URL: 'memory:', KEEP_ALIVE_TIMEOUT_MS: '60000' }
const CLIENT = new Agent({ keepAliveTimeout: 500, keepAliveMaxTimeout: 500 })

// Under a file-size limit, Node ignores SIGXFSZ, so that a write past the limit fails with
// EFBIG, as the service expects; the exit handler of tap's process tracking turns the
// signal back into death, unless another listener is there, as this one is.
const FILE_SIZE_LIMITED = ['--import=data:text/javascript,process.on("SIGXFSZ",()=>{})']

/** What a service process starts with besides its environment. */
export interface ProcessOptions {
  /** The files it may open (ulimit -n, soft and hard). */
  openFiles?: number
  /**
   * The largest file it may write, in bytes (ulimit -f, soft only, so that `prlimit`
   * may lift it while it runs): a write past it fails as on a full disk.
   */
  fileBytes?: number
  /**
   * A file the process sees as /etc/resolv.conf, bound over it in a mount namespace of
   * its own (root, as CI has): the name servers it resolves through.
   */
  resolvConf?: string
  /** Called with the process as soon as it is spawned, before it listens. */
  spawned?: (child: ChildProcess) => void
}

/** src/server.ts as a process, run as tap runs this test (its types stripped by Node, its coverage counted). */
function spawnService (env: NodeJS.ProcessEnv, stdio: StdioOptions, { openFiles, fileBytes, resolvConf }: ProcessOptions = {}): ChildProcess {
  const command = [process.execPath, ...NODE_ARGS, ...(fileBytes === undefined ? [] : FILE_SIZE_LIMITED), SERVER]
  const options = { env: { ...process.env, ...CHILD_ENV, ...env }, stdio }
  const setup = [
    ...(resolvConf === undefined ? [] : [`mount --bind '${resolvConf}' /etc/resolv.conf`]),
    ...(openFiles === undefined ? [] : [`ulimit -n ${openFiles}`]),
    // sh counts this limit in blocks of 512 bytes.
    ...(fileBytes === undefined ? [] : [`ulimit -S -f ${Math.ceil(fileBytes / 512)}`])
  ]
  if (setup.length === 0) return spawn(command[0], command.slice(1), options)
  const shell = ['/bin/sh', '-c', `${setup.join(' && ')} && exec "$0" "$@"`, ...command]
  // unshare execs the shell, which execs Node: the child's pid is the service's.
  if (resolvConf === undefined) return spawn(shell[0], shell.slice(1), options)
  return spawn('unshare', ['--mount', ...shell], options)
}

/**
 * Starts src/server.ts as a real process on a free port and resolves once it listens.
 * Killed when the test ends.
 */
export async function startServer (t: Test, env: NodeJS.ProcessEnv = {}, options: ProcessOptions = {}): Promise<RunningServer> {
  const child = spawnService({ LOG_LEVEL: 'info', ...env }, ['ignore', 'pipe', 'pipe'], options)
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  options.spawned?.(child)
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    // A graceful stop lets the child write its coverage; a stuck one is killed.
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  })
  const stdout: string[] = []
  const stderr: string[] = []
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line))
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout.push(line)
      // The start line, logged once the service listens, says where its docs are.
      const listening = /"docs":"(http:\/\/127\.0\.0\.1:\d+)\/docs"/.exec(line)
      if (listening !== null) resolve(listening[1])
    })
    exited.then((code) => reject(new Error(`server exited with ${code} before listening: ${stderr.join('\n')}`)), reject)
  })
  const port = Number(new URL(url).port)
  return {
    url,
    child,
    stdout,
    stderr,
    exited,
    request: async (method, path, options) => await request(url, method, path, options),
    send: async (chunks, options) => await send(t, port, chunks, options)
  }
}

async function request (url: string, method: string, path: string, { body, token = TOKEN, headers = {} }: RequestOptions = {}): Promise<Answer> {
  const started = performance.now()
  const res = await fetch(url + path, {
    dispatcher: CLIENT,
    method,
    headers: {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers
    },
    body: body === undefined || typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
  })
  const text = await res.text()
  return {
    statusCode: res.status,
    headers: Object.fromEntries(res.headers),
    body: text,
    json: () => JSON.parse(text),
    ms: performance.now() - started
  }
}

async function send (t: Test, port: number, chunks: Array<string | Uint8Array>, { gapMs = 0, next, until, signal, halfClose = false }: SendOptions = {}): Promise<{ text: string, ms: number, sent: number }> {
  const started = Date.now()
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)))
  socket.on('error', () => {})
  socket.setEncoding('utf8')
  let text = ''
  socket.on('data', (data: string) => {
    text += data
    if (until?.(text) === true) socket.destroy()
  })
  signal?.addEventListener('abort', () => socket.destroy(), { once: true })
  let sent = 0
  for (const [i, chunk] of chunks.entries()) {
    if (i > 0) await Promise.race([sleep(gapMs).then(next), closed])
    if (socket.destroyed) break
    socket.write(chunk)
    sent++
  }
  if (halfClose && !socket.destroyed) socket.end()
  return { ms: await closed, text, sent }
}

/**
 * Runs src/server.ts expecting it to refuse to start; resolves with its exit code and
 * stderr. One that starts after all is killed past `deadlineMs` (code null): the test
 * fails on its code, not on tap's timeout minutes later.
 */
export async function failedStart (env: NodeJS.ProcessEnv, deadlineMs = 30_000): Promise<{ code: number | null, stderr: string }> {
  const child = spawnService(env, ['ignore', 'ignore', 'pipe'])
  let stderr = ''
  child.stderr!.on('data', (chunk) => { stderr += chunk })
  const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs)
  const [code] = await once(child, 'exit')
  clearTimeout(timer)
  return { code, stderr }
}

/** The lines a process logged at error or fatal level: a test that expects nothing to go wrong holds them to none. */
export function errorLines (stdout: string[]): string[] {
  return stdout.filter((line) => /"level":(50|60)/.test(line))
}

let barriers = 0

/**
 * Resolves once every line the service logged before the call has reached `stdout`: it writes
 * its log in blocks, so a line is known to be there only once a later one is. The later one is
 * a request to no route, which is logged at info like every 404. A test that checks a line is
 * absent, or counts lines, waits for this first.
 */
export async function logsArrived (server: RunningServer): Promise<void> {
  const path = `/logs-arrived-${++barriers}`
  await server.request('GET', path, { token: null })
  await waitForLine(server.stdout, new RegExp(`"url":"${path}"`), 30_000)
}

/** Resolves with the first line matching, waiting up to timeoutMs for the process to write it. */
export async function waitForLine (lines: string[], pattern: RegExp, timeoutMs = 5000): Promise<string> {
  const { value } = await retryUntil(async () => lines.find((line) => pattern.test(line)), (line) => line !== undefined, timeoutMs, 20)
  if (value === undefined) throw new Error(`no line matched ${pattern} within ${timeoutMs} ms`)
  return value
}
