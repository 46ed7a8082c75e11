/**
 * The bench's child processes (servers, load generators): every one is recorded so that
 * no exit path leaves one behind, stopped gently then firmly, and pinned to a core with
 * taskset when the machine has two, so the server and the load generator never share one.
 */
import type { ChildProcess } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import { cpuCount } from './machine.ts'

const children = new Set<ChildProcess>()

/** Why a child could not be started (say, ENOENT): without a listener the error would end the bench. */
const spawnErrors = new WeakMap<ChildProcess, Error>()

export function track (child: ChildProcess): ChildProcess {
  children.add(child)
  child.once('exit', () => children.delete(child))
  child.once('error', (err) => {
    spawnErrors.set(child, err)
    children.delete(child)
  })
  return child
}

export function spawnError (child: ChildProcess): Error | undefined {
  return spawnErrors.get(child)
}

export function killAll (): void {
  for (const child of children) child.kill('SIGKILL')
}

/**
 * Runs `cleanUp` (which should call killAll) however the process ends: done, failed, or
 * stopped by a signal, which exits with 130.
 */
export function cleanUpOnExit (name: string, cleanUp: () => void): void {
  process.on('exit', cleanUp)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${name}: ${signal}, stopping\n`)
      process.exit(130)
    })
  }
}

async function waitForExit (child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true
  return await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

export async function stop (child: ChildProcess): Promise<void> {
  child.kill('SIGTERM')
  if (!await waitForExit(child, 10_000)) {
    child.kill('SIGKILL')
    await waitForExit(child, 5_000)
  }
}

export function onPath (command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, command)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

// Pinning needs two cores: the server on core 0, the load generator on core 1, so
// neither steals cycles from the other and the server's number is its own.
export const tasksetFound = onPath('taskset') !== undefined
export const pin = tasksetFound && cpuCount >= 2

export function pinned (core: number, command: string, args: string[]): [string, string[]] {
  return pin ? ['taskset', ['-c', String(core), command, ...args]] : [command, args]
}
