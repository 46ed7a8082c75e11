import { subscribe } from 'node:diagnostics_channel'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { NodeSDK, type NodeSDKConfiguration } from '@opentelemetry/sdk-node'
import { VERSION } from '../process/project.ts'
import { tracing } from './hooks.ts'
import { instrumentations } from './instrumentations.ts'
import { correlate } from './log-correlation.ts'
import { serviceSpans } from './spans.ts'

// Imported only when tracing is on (see src/server.ts): the SDK, its exporters and the
// instrumentations' hooks never load otherwise.

// At shutdown, the spans still buffered get this long: an unreachable collector must not
// hold the exit past the grace (the exporter's own timeout is 10 s an attempt).
const SHUTDOWN_MS = 1000

export interface Tracing {
  /** Exports the spans still buffered, then stops. */
  shutdown: () => Promise<void>
}

/**
 * Starts the OpenTelemetry SDK, configured by the OTEL_* variables (the exporter, its
 * endpoint and protocol, the sampler, the service name); `spanProcessors` replace the
 * exporter (tests). Must run before the PostgreSQL driver is imported: it patches pg as it loads.
 */
export function startTracing (spanProcessors?: NodeSDKConfiguration['spanProcessors']): Tracing {
  const sdk = new NodeSDK({
    // The SDK reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; without either, 'plant-store'.
    ...(named(process.env) ? {} : { serviceName: 'plant-store' }),
    ...(spanProcessors === undefined ? {} : { spanProcessors }),
    instrumentations: instrumentations(),
    // Traces only: the service's metrics are Prometheus's (GET /metrics), its logs pino's.
    metricReaders: [],
    logRecordProcessors: []
  })
  sdk.start()
  // After @fastify/otel's own subscriber (registered by start), so its span exists first.
  const onFastify = (message: unknown): void => correlate((message as { fastify: FastifyInstance }).fastify)
  subscribe('fastify.initialization', onFastify)
  tracing.spans = serviceSpans(VERSION)
  return {
    shutdown: async () => {
      tracing.spans = undefined
      await Promise.race([sdk.shutdown(), sleep(SHUTDOWN_MS, undefined, { ref: false })])
    }
  }
}

function named (env: NodeJS.ProcessEnv): boolean {
  return (env.OTEL_SERVICE_NAME ?? '') !== '' || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '')
}
