import type { FastifyServerOptions } from 'fastify'

/** pino through Fastify: JSON lines for machines, pretty lines only for a person at a terminal. */
export function loggerOptions (level: string): FastifyServerOptions['logger'] {
  return {
    level,
    // The request serializer does not log headers; this keeps a token out of any
    // line that logs them anyway.
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty' } } : {})
  }
}
