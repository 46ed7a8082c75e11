import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'

/** The OpenAPI document as the app generates it from its routes: what openapi.yaml must say. */
export async function generateContract (): Promise<string> {
  const app = await buildApp(loadConfig({ DATABASE_URL: 'memory:', LOG_LEVEL: 'silent', API_TOKENS: 'contract-generation-token' }))
  try {
    await app.ready()
    return app.swagger({ yaml: true })
  } finally {
    await app.close()
  }
}
