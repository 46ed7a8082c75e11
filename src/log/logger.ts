import type { FastifyServerOptions } from 'fastify'
import { stdSerializers } from 'pino'
import { logOutput, type LogOutput } from './output.ts'

const REDACTED = '[redacted]'

// Lines go out in blocks of 4 KiB and within 100 ms; past 16 MiB waiting (an output that
// stopped reading), new lines are dropped rather than taking the service's memory.
const FLUSH_MS = 100
export const OUTPUT_SIZES = { minLength: 4096, periodicFlush: FLUSH_MS, maxLength: 16 * 1024 * 1024, maxWrite: 1024 * 1024 }

// Standard output, one per process, shared by every app.
let standardOutput: LogOutput | undefined

/** Writes out the write in flight: a graceful shutdown awaits it, and exit writes the rest. */
export async function flushLog (): Promise<void> {
  await standardOutput?.flush()
}

let lastMs = -1
let lastTime = ''
/** ISO 8601 in UTC, readable by a person and any log tool; formatted once a millisecond, as many lines share one. */
function isoTime (): string {
  const now = Date.now()
  if (now !== lastMs) {
    lastMs = now
    lastTime = `,"time":"${new Date(now).toISOString()}"`
  }
  return lastTime
}

/**
 * pino through Fastify: JSON lines, pretty only at a terminal. `secrets` (tokens, the
 * database password) are cut out of every logged error, whoever wrote them into it.
 */
export function loggerOptions (level: string, secrets: string[]): FastifyServerOptions['logger'] {
  const scrub = scrubber(secrets)
  return {
    level,
    timestamp: isoTime,
    // The request serializer logs no headers; this keeps a token out of a line that does.
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: REDACTED },
    serializers: { err: (err: Error) => scrub(stdSerializers.err(err)) },
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty' } } : { stream: (standardOutput ??= logOutput(1, OUTPUT_SIZES)).stream })
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
