// First: refuse a too-old Node before the driver loads, and stop SIGHUP ending the process.
import './process/supported-node.ts'
import { onReload } from './process/reload-signal.ts'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import closeWithGrace from 'close-with-grace'
import { loadConfig } from './config.ts'
import { flushLog } from './log/logger.ts'
import { startLine } from './process/start-line.ts'
import { devToken, devTokenFile } from './tokens/dev-token.ts'
import { tracingWanted } from './tracing/wanted.ts'

/** Exits with one line saying why; `secrets` (the config's) are cut out of it, as out of the log. */
function cannotStart (err: unknown, secrets: string[] = []): never {
  let message = err instanceof Error ? err.message : String(err)
  for (const secret of secrets) if (secret !== '') message = message.replaceAll(secret, '[redacted]')
  process.stderr.write(`plant-store: cannot start: ${message}\n`)
  process.exit(1)
}

let config
try {
  config = loadConfig(process.env, devToken)
} catch (err) {
  cannotStart(err)
}

// Tracing starts before the app is imported: the SDK patches the PostgreSQL driver as it
// loads. Off (no exporter configured), nothing of OpenTelemetry is imported.
const tracing = tracingWanted(process.env) ? (await import('./tracing/sdk.ts')).startTracing() : undefined
const { buildApp } = await import('./app.ts')
const { secrets } = config
const app = await buildApp(config).catch((err: unknown) => cannotStart(err, secrets))

// SIGTERM / SIGINT: serve, not ready, for SHUTDOWN_DELAY_MS (load balancers lag), then
// close: in-flight requests and pending writes finish, exit 0; past the grace, exit 1.
closeWithGrace({
  delay: config.SHUTDOWN_GRACE_MS,
  logger: { error: (message: unknown) => app.log.error(message) },
  // close-with-grace would shut down on SIGHUP too; here it means "reload the tokens".
  skip: ['SIGHUP']
}, async ({ signal, err }) => {
  if (err !== undefined) {
    app.log.error({ err }, 'fatal error, shutting down')
  } else if (config.SHUTDOWN_DELAY_MS === 0) {
    app.log.info({ signal }, 'shutting down')
  } else {
    app.log.info({ signal, delayMs: config.SHUTDOWN_DELAY_MS }, 'shutting down: serving, not ready, until the delay ends')
    app.drain()
    await sleep(config.SHUTDOWN_DELAY_MS)
  }
  await app.close()
  await tracing?.shutdown()
  await flushLog()
})

// SIGHUP rereads the tokens file, as daemons reread their configuration.
onReload(() => { app.reloadTokens() })

try {
  await app.ready()
  // Fastify logs "Server listening" once per address with no option against it
  // (fastify/help#641): silent while binding, the start line below says it once.
  const level = app.log.level
  app.log.level = 'silent'
  try {
    await app.listen({ host: config.HOST, port: config.PORT })
  } finally {
    app.log.level = level
  }
} catch (err) {
  await app.close()
  cannotStart(err, secrets)
}
app.log.info(...startLine(config, app.server.address() as AddressInfo))

if (config.generatedToken !== undefined) {
  // Printed at each start, beside the logs rather than in them: tokens are never logged.
  const file = devTokenFile(config.database)
  const kept = file === undefined ? 'for this run only' : `kept in ${file} for the next starts`
  process.stderr.write(`plant-store: neither API_TOKENS nor API_TOKENS_FILE is set; the service accepts the generated token ${config.generatedToken} (${kept})\n`)
}
