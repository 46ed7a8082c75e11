import { hostname } from 'node:os'
import type { FastifyServerOptions } from 'fastify'
import { stdSerializers } from 'pino'
import { LogOutput } from './log-output.ts'

const REDACTED = '[redacted]'

// Lines are written in blocks of about this many bytes, and at least this often: one
// write a block instead of one a line, and a line at most a tenth of a second late.
const BLOCK_BYTES = 4096
export const FLUSH_MS = 100
// Past this much waiting to be written (an output that stopped reading), lines are
// dropped rather than held: the log cannot take the service's memory.
const MAX_WAITING_BYTES = 16 * 1024 * 1024

let standardOutput: LogOutput | undefined

/**
 * Standard output, written asynchronously: a line never waits for the write, and what
 * is waiting is written at exit, whatever ends the process but SIGKILL (a SIGTERM's
 * shutdown exits; pino flushes before a fatal line's exit). One per process, shared by
 * every app.
 */
function output (): LogOutput {
  if (standardOutput === undefined) {
    const stdout = new LogOutput(1, { blockBytes: BLOCK_BYTES, flushMs: FLUSH_MS, maxWaitingBytes: MAX_WAITING_BYTES, droppedLine })
    process.on('exit', () => { stdout.flushSync() })
    standardOutput = stdout
  }
  return standardOutput
}

/** Where lines are missing, a warning in pino's shape says how many: a gap in the log is never silent. */
function droppedLine (count: number): string {
  const msg = `${count} log lines dropped: standard output did not take them in time`
  return JSON.stringify({ level: 40, time: new Date().toISOString(), pid: process.pid, hostname: hostname(), dropped: count, msg }) + '\n'
}

/** Writes out the log's waiting lines: a graceful shutdown awaits it before it exits. */
export async function flushLog (): Promise<void> {
  await standardOutput?.flush()
}

let lastMs = -1
let lastTime = ''
/**
 * ISO 8601 in UTC: read by a person and by any log tool without converting epoch
 * milliseconds. Formatted once per millisecond: under load, many lines share one.
 */
function isoTime (): string {
  const now = Date.now()
  if (now !== lastMs) {
    lastMs = now
    lastTime = `,"time":"${new Date(now).toISOString()}"`
  }
  return lastTime
}

/**
 * pino through Fastify: JSON lines for machines, pretty lines only for a person at a
 * terminal. `secrets` (the tokens, the database password) are cut out of every logged
 * error, whatever wrote them into it: a driver's message, a stack, a cause.
 */
export function loggerOptions (level: string, secrets: string[]): FastifyServerOptions['logger'] {
  const scrub = scrubber(secrets)
  return {
    level,
    timestamp: isoTime,
    // The request serializer does not log headers; this keeps a token out of any
    // line that logs them anyway.
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: REDACTED },
    serializers: { err: (err: Error) => scrub(stdSerializers.err(err)) },
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty' } } : { stream: output() })
  }
}

/** Replaces every secret anywhere in a serialized error; errors are rare, so a JSON round trip is cheap enough. */
function scrubber (secrets: string[]): <T>(value: T) => T {
  const present = secrets.filter((secret) => secret !== '')
  if (present.length === 0) return (value) => value
  return (value) => {
    let json = JSON.stringify(value)
    if (json === undefined) return value
    // Compared as they appear inside a JSON string, escapes included.
    for (const secret of present) json = json.replaceAll(JSON.stringify(secret).slice(1, -1), REDACTED)
    return JSON.parse(json)
  }
}
