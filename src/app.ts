import Fastify, { type FastifyInstance } from 'fastify'
import { sharedSchemas } from '../schemas/index.ts'
import type { Config } from './config.ts'
import { clientErrorHandler } from './http/client-error.ts'
import { Connections } from './http/connections.ts'
import { errorHandler, frameworkErrorHandler } from './http/error-handler.ts'
import { originForm } from './http/request-target.ts'
import { requestIdGenerator } from './http/request-id.ts'
import { RouteMethods } from './http/route-methods.ts'
import { sharedSerializers } from './http/serializers.ts'
import { buildValidatorCompiler, NO_QUERY } from './http/validation.ts'
import { loggerOptions } from './log/logger.ts'
import { RequestLog } from './log/request-log.ts'
import plants from './plants/plugin.ts'
import answerBatches from './plugins/answer-batches.ts'
import auth from './plugins/auth.ts'
import bodies from './plugins/bodies.ts'
import cors from './plugins/cors.ts'
import docs from './plugins/docs.ts'
import metrics from './plugins/metrics.ts'
import overload from './plugins/overload.ts'
import readiness from './plugins/readiness.ts'
import requestGate from './plugins/request-gate.ts'
import tokens from './plugins/tokens.ts'
import health from './routes/health.ts'
import metricsRoute from './routes/metrics.ts'
import root from './routes/root.ts'
import type { Resolve } from './webhooks/resolver.ts'

// Fastify's default maxParamLength: an id or subscription id never needs more.
const ROUTER = { ignoreTrailingSlash: true, maxParamLength: 100 }

/** What a test may replace: the world outside the process. */
export interface Seams {
  /** Resolves webhook host names (DNS by default). */
  resolve?: Resolve
}

/**
 * Builds the app from the one config, which every plugin reads as `app.config`: request
 * machinery, then app-wide plugins, then routes (the API behind auth).
 */
export async function buildApp (config: Config, seams: Seams = {}): Promise<FastifyInstance> {
  const connections = new Connections(config)
  const routes = new RouteMethods(ROUTER)
  const app = Fastify({
    logger: loggerOptions(config.LOG_LEVEL, config.secrets),
    logController: new RequestLog(),
    bodyLimit: config.BODY_LIMIT,
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    genReqId: requestIdGenerator(config.trustProxy),
    serverFactory: connections.serverFactory,
    clientErrorHandler: clientErrorHandler(connections),
    frameworkErrors: frameworkErrorHandler,
    // Closing is answered by the request gate, in the Error shape.
    return503OnClosing: false,
    routerOptions: ROUTER,
    rewriteUrl: originForm,
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers } }
  })
  app.decorate('config', config)
  app.addHook('onRoute', ({ method, url }) => routes.add(method, url))
  app.setValidatorCompiler(buildValidatorCompiler(sharedSchemas))
  for (const schema of sharedSchemas) app.addSchema(schema)
  // A DELETE's body has no meaning (RFC 9110): never read, so never refused.
  app.addHttpMethod('DELETE', { hasBody: false, overrideExisting: true })
  app.setErrorHandler(errorHandler)
  app.decorateReply('errorCode', null)
  app.setNotFoundHandler(routes.notFoundHandler)

  // Before the request gate: a preflight is recognized for it to answer, and a 404 is readable by the page.
  if (config.corsOrigins.length > 0) await app.register(cors)
  await app.register(readiness)
  await app.register(requestGate, { connections, routes })
  await app.register(answerBatches)
  await app.register(metrics)
  // Its preParsing hook runs after every onRequest hook: auth and overload refuse first, unread.
  await app.register(bodies)
  await app.register(docs)
  await app.register(tokens)

  await app.register(root)
  await app.register(health)
  if (!config.METRICS_REQUIRE_TOKEN) await app.register(metricsRoute, { requireToken: false })
  await app.register(async function api (scope) {
    await scope.register(overload)
    await scope.register(auth)
    // A query parameter an operation does not take is refused (unknown_parameter), not ignored.
    scope.addHook('onRoute', (route) => { route.schema = { querystring: NO_QUERY, ...route.schema } })
    if (config.METRICS_REQUIRE_TOKEN) await scope.register(metricsRoute, { requireToken: true })
    await scope.register(plants, { resolve: seams.resolve })
  })
  return app
}
