/**
 * A scenario's server: started as its own process (pinned to core 0) on a free port in
 * its own temp dir, logging into a file as in production, and waited for until it
 * answers; then what its log says when something went wrong.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, createReadStream, existsSync, openSync, readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '../scripts/free-port.ts'
import { pinned, spawnError, stop, track } from './processes.ts'
import type { ServerSpec } from './scenarios.ts'
import { fail, ROOT, TOKEN } from './settings.ts'

export interface Server {
  child: ChildProcess
  pid: number
  port: number
  logPath: string
  errPath: string
}

async function answers (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { socket.destroy(); resolve(false) })
  })
}

export function tail (path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}

export async function startServer (spec: ServerSpec, dir: string): Promise<Server> {
  const port = await freePort()
  const logPath = join(dir, 'server.log')
  const errPath = join(dir, 'server.err')
  // A file, not /dev/null: the kernel then really copies every log line, as in production.
  const out = openSync(logPath, 'w')
  const err = openSync(errPath, 'w')
  const [command, args] = pinned(0, process.execPath, spec.argv)
  let child: ChildProcess
  try {
    child = track(spawn(command, args, {
      cwd: ROOT,
      stdio: ['ignore', out, err],
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        API_TOKENS: TOKEN,
        LOG_LEVEL: 'info',
        ...spec.env(dir)
      }
    }))
  } finally {
    closeSync(out)
    closeSync(err)
  }
  const deadline = Date.now() + 30_000
  while (!await answers(port)) {
    const startError = spawnError(child)
    if (startError !== undefined) fail(`cannot start ${command}: ${startError.message}`)
    if (child.exitCode !== null || child.signalCode !== null) {
      const why = tail(errPath)
      fail(`the server exited (${child.exitCode ?? child.signalCode}) before answering: ${why.split('\n').at(-1) ?? ''}\n${why}\n${tail(logPath)}`)
    }
    if (Date.now() > deadline) {
      await stop(child)
      fail(`the server did not answer on port ${port} within 30 s:\n${tail(errPath)}`)
    }
    await sleep(50)
  }
  // With taskset the spawned process execs node, so this pid is the server's own.
  return { child, pid: child.pid!, port, logPath, errPath }
}

/** The service's own log lines, requests left out: why it stopped, say. */
export function notableLogLines (logPath: string, count = 10): string {
  try {
    return readFileSync(logPath, 'utf8').split('\n').filter((l) => l !== '' && !l.includes('"msg":"request completed"')).slice(-count).join('\n')
  } catch {
    return ''
  }
}

/** The first request the service logged as failed, to say why a row has errors. */
export async function firstLoggedError (logPath: string): Promise<string | undefined> {
  if (!existsSync(logPath)) return undefined
  const lines = createInterface({ input: createReadStream(logPath), crlfDelay: Infinity })
  try {
    for await (const line of lines) {
      let entry: { status?: number, method?: string, url?: string, level?: number, msg?: string, err?: { message?: string } }
      try { entry = JSON.parse(line) } catch { continue }
      if ((entry.status ?? 0) >= 400 || (entry.level ?? 0) >= 50) {
        const request = entry.method === undefined ? '' : `${entry.method} ${entry.url ?? ''} `
        return `${request}${entry.status ?? ''} ${entry.msg ?? ''}${entry.err?.message === undefined ? '' : `: ${entry.err.message}`}`.trim()
      }
    }
  } finally {
    lines.close()
  }
  return undefined
}
