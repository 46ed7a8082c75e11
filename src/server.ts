import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'

let config
try {
  config = loadConfig()
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  process.stderr.write(`plant-store: cannot start: ${err.message}\n`)
  process.exit(1)
}

const app = await buildApp(config)
await app.listen({ host: config.host, port: config.port })

if (config.generatedToken !== undefined) {
  // Printed once, beside the logs rather than in them: tokens are never logged.
  process.stderr.write(`plant-store: API_TOKENS is empty; this run accepts the generated token ${config.generatedToken}\n`)
}
