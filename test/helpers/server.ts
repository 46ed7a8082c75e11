import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import type { Test } from 'tap'
import { TOKEN } from './app.js'

export interface RunningServer {
  url: string
  child: ChildProcess
  /** Every line the process wrote to stdout (its JSON logs) and stderr, so far. */
  stdout: string[]
  stderr: string[]
  exited: Promise<number | null>
}

const SERVER = new URL('../../src/server.ts', import.meta.url).pathname
// The suite's typecheck covers the types; the child only needs its TypeScript transpiled,
// which is four times faster to start.
const CHILD_ENV = { HOST: '127.0.0.1', PORT: '0', DATABASE_URL: 'memory:', TS_NODE_TRANSPILE_ONLY: '1' }

/**
 * Starts src/server.ts as a real process on a free port, with the same TypeScript
 * loader tap gave this test, and resolves once it listens. Killed when the test ends.
 */
export async function startServer (t: Test, env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, [...process.execArgv, SERVER], {
    env: { ...process.env, ...CHILD_ENV, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
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
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line)
      if (listening !== null) resolve(listening[1])
    })
    exited.then((code) => reject(new Error(`server exited with ${code} before listening: ${stderr.join('\n')}`)), reject)
  })
  return { url, child, stdout, stderr, exited }
}

/** Runs src/server.ts expecting it to refuse to start; resolves with its exit code and stderr. */
export async function failedStart (env: NodeJS.ProcessEnv): Promise<{ code: number | null, stderr: string }> {
  const child = spawn(process.execPath, [...process.execArgv, SERVER], {
    env: { ...process.env, ...CHILD_ENV, ...env },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr!.on('data', (chunk) => { stderr += chunk })
  const [code] = await once(child, 'exit')
  return { code, stderr }
}

/** Resolves with the first line matching, waiting up to timeoutMs for the process to write it. */
export async function waitForLine (lines: string[], pattern: RegExp, timeoutMs = 5000): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const line = lines.find((l) => pattern.test(l))
    if (line !== undefined) return line
    if (Date.now() > deadline) throw new Error(`no line matched ${pattern} within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** POST /plants to a running service, the body as JSON, with a bearer token (the test token by default). */
export async function postTo (url: string, body: unknown, token = TOKEN): Promise<Response> {
  return await fetch(`${url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
}
