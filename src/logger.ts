import type { FastifyServerOptions } from 'fastify'
import { stdSerializers, stdTimeFunctions } from 'pino'

const REDACTED = '[redacted]'

/**
 * pino through Fastify: JSON lines for machines, pretty lines only for a person at a
 * terminal. `secrets` (the tokens, the database password) are cut out of every logged
 * error, whatever wrote them into it: a driver's message, a stack, a cause.
 */
export function loggerOptions (level: string, secrets: string[]): FastifyServerOptions['logger'] {
  const scrub = scrubber(secrets)
  return {
    level,
    // ISO 8601 in UTC: read by a person and by any log tool without converting epoch milliseconds.
    timestamp: stdTimeFunctions.isoTime,
    // The request serializer does not log headers; this keeps a token out of any
    // line that logs them anyway.
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: REDACTED },
    serializers: { err: (err: Error) => scrub(stdSerializers.err(err)) },
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty' } } : {})
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
