import Fastify, { type FastifyInstance } from 'fastify'
import { sharedSchemas } from '../schemas/index.js'
import auth from './auth.js'
import type { Config } from './config.js'
import docs from './docs.js'
import { errorHandler, notFoundHandler } from './error-handler.js'
import { parseJsonBody } from './json-body.js'
import { loggerOptions } from './logger.js'
import plants from './plants/plugin.js'
import { RequestLog } from './request-log.js'
import { buildValidatorCompiler } from './validation.js'

export async function buildApp (config: Config): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(config.logLevel),
    bodyLimit: config.bodyLimit,
    logController: new RequestLog()
  })

  app.setValidatorCompiler(buildValidatorCompiler(sharedSchemas))
  for (const schema of sharedSchemas) app.addSchema(schema)

  // JSON is the only body this API takes: anything else is a 415, text/plain included.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (_request: unknown, body: Buffer) => parseJsonBody(body))

  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler(notFoundHandler)

  await app.register(docs)
  await app.register(async function api (scope) {
    await scope.register(auth, { tokens: config.apiTokens })
    await scope.register(plants, { database: config.database })
  })
  return app
}
