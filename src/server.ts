import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { loadConfig } from './config.js'

function cannotStart (err: unknown): never {
  process.stderr.write(`plant-store: cannot start: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
}

let config
try {
  config = loadConfig()
} catch (err) {
  cannotStart(err)
}

const app = await buildApp(config).catch(cannotStart)
app.log.info({ node: process.version }, `plant-store starting on Node ${process.version}`)

// SIGTERM / SIGINT: stop accepting, let in-flight requests finish (new ones get 503),
// commit and answer pending writes, close the store, exit 0; past the grace delay, exit 1.
closeWithGrace({
  delay: config.shutdownGraceMs,
  logger: { error: (message: unknown) => app.log.error(message) },
  // close-with-grace would shut down on SIGHUP too; here it means "reload the tokens".
  skip: ['SIGHUP']
}, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'fatal error, shutting down')
  else app.log.info({ signal }, 'shutting down')
  await app.close()
})

// SIGHUP, as daemons reread their configuration: the tokens file, without a restart.
process.on('SIGHUP', () => { app.reloadTokens() })

await app.listen({ host: config.host, port: config.port }).catch(async (err) => {
  await app.close()
  cannotStart(err)
})

if (config.generatedToken !== undefined) {
  // Printed once, beside the logs rather than in them: tokens are never logged.
  process.stderr.write(`plant-store: neither API_TOKENS nor API_TOKENS_FILE is set; this run accepts the generated token ${config.generatedToken}\n`)
}
