import Fastify, { type FastifyInstance } from 'fastify'
import { sharedSchemas } from '../schemas/index.ts'
import type { Config } from './config.ts'
import { secretsOf } from './config/secrets.ts'
import { clientErrorHandler, trackLatestAnswer } from './http/client-error.ts'
import { errorHandler, frameworkErrorHandler } from './http/error-handler.ts'
import { originForm, requireOriginForm } from './http/request-target.ts'
import { parseJsonBody } from './http/json-body.ts'
import { requestIdGenerator } from './http/request-id.ts'
import { RouteMethods } from './http/route-methods.ts'
import { sharedSerializers } from './http/serializers.ts'
import { RequestLog } from './log/request-log.ts'
import { notFoundHandler, refuseUnrouted } from './http/unrouted.ts'
import { buildValidatorCompiler, NO_QUERY } from './http/validation.ts'
import { loggerOptions } from './log/logger.ts'
import plants from './plants/plugin.ts'
import answerBatches from './plugins/answer-batches.ts'
import answerHeaders from './plugins/answer-headers.ts'
import bodyBudget from './plugins/body-budget.ts'
import auth from './plugins/auth.ts'
import closing from './plugins/closing.ts'
import cors from './plugins/cors.ts'
import docs from './plugins/docs.ts'
import metrics from './plugins/metrics.ts'
import overload from './plugins/overload.ts'
import readiness from './plugins/readiness.ts'
import tokens from './plugins/tokens.ts'
import unreadAnswers from './plugins/unread-answers.ts'
import health from './routes/health.ts'
import metricsRoute from './routes/metrics.ts'
import root from './routes/root.ts'
import type { Resolve } from './webhooks/resolver.ts'

// Fastify's default: an id or subscription id never needs more.
const MAX_PARAM_LENGTH = 100

/** What a test may replace: the world outside the process. */
export interface Seams {
  /** Resolves webhook host names (DNS by default). */
  resolve?: Resolve
}

/** Builds the app: request machinery, then app-wide plugins, then routes (the API behind overload and auth). */
export async function buildApp (config: Config, seams: Seams = {}): Promise<FastifyInstance> {
  const { limits } = config
  const app = Fastify({
    logger: loggerOptions(config.logLevel, secretsOf(config)),
    logController: new RequestLog(),
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    genReqId: requestIdGenerator(config.trustProxy),
    // Slow clients cannot hold a connection: request, headers, idle keep-alive and a
    // stalled answer each have a deadline, checked every second.
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: limits.sendTimeoutMs,
    // Node answers an HTTP/1.1 request without Host itself (requireHostHeader): a 400 with no body.
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    // Closing is answered by the closing plugin, in the Error shape.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    rewriteUrl: originForm,
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers } }
  })
  // A connection is a file: past the cap, Node closes a new one as it accepts it.
  app.server.maxConnections = limits.maxConnections
  // An unknown expectation is ignored, as RFC 9110 allows, rather than a bodiless 417.
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response))
  app.server.on('request', trackLatestAnswer)
  // A client that half-closes after its request still wants the answer (RFC 9112, 9.6);
  // without this (undocumented) Node switch, a stored create would go unanswered.
  Object.assign(app.server, { httpAllowHalfOpen: true })
  const routes = new RouteMethods({ ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH })
  app.addHook('onRoute', ({ method, url }) => routes.add(method, url))

  app.setValidatorCompiler(buildValidatorCompiler(sharedSchemas))
  for (const schema of sharedSchemas) app.addSchema(schema)
  // A DELETE's body has no meaning (RFC 9110): never read, so never refused.
  app.addHttpMethod('DELETE', { hasBody: false, overrideExisting: true })
  // JSON is the only body this API takes: anything else is a 415, text/plain included.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (_request: unknown, body: Buffer) => parseJsonBody(body))
  app.setErrorHandler(errorHandler)
  app.decorateReply('errorCode', null)
  app.setNotFoundHandler(notFoundHandler(routes))

  await app.register(unreadAnswers, { sendTimeoutMs: limits.sendTimeoutMs })
  await app.register(answerHeaders)
  await app.register(answerBatches)
  // Before refuseUnrouted: a preflight is answered first, and a 404 is readable by the page.
  if (config.corsOrigins.length > 0) await app.register(cors, { origins: config.corsOrigins })
  app.addHook('onRequest', requireOriginForm)
  app.addHook('onRequest', refuseUnrouted(routes))
  await app.register(readiness)
  await app.register(closing)
  await app.register(metrics, { maxAgeMs: config.metricsCacheMs })
  // Its preParsing hook runs after every onRequest hook: auth and overload refuse first, unread.
  await app.register(bodyBudget, { maxBytes: config.bodyBytesInFlight })
  await app.register(docs)
  await app.register(tokens, { tokens: config.tokens, file: config.tokensFile, generated: config.generatedToken !== undefined })

  await app.register(root)
  await app.register(health)
  if (!config.metricsRequireToken) await app.register(metricsRoute, { requireToken: false })
  await app.register(async function api (scope) {
    await scope.register(overload, {
      maxEventLoopDelayMs: limits.maxEventLoopDelayMs,
      maxHeapUsedBytes: limits.maxHeapUsedBytes
    })
    await scope.register(auth, {
      ratePerToken: limits.ratePerToken,
      failuresPerMinute: limits.authFailuresPerMinute
    })
    // A query parameter an operation does not take is refused (unknown_parameter), not ignored.
    scope.addHook('onRoute', (route) => { route.schema = { querystring: NO_QUERY, ...route.schema } })
    if (config.metricsRequireToken) await scope.register(metricsRoute, { requireToken: true })
    await scope.register(plants, {
      database: config.database,
      maxBatch: config.groupCommitMaxBatch,
      maxQueueBytes: config.writeQueueLimitBytes,
      changes: config.changes,
      webhooks: { settings: config.webhooks, resolve: seams.resolve }
    })
  })
  return app
}
