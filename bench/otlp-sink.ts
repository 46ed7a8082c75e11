/**
 * BENCH_TRACING=1: the services benched export their spans (100% sampled, OTLP/HTTP
 * protobuf, the SDK's defaults) to this sink, which reads and drops them, as a collector
 * would take them. A build without tracing ignores the variables.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

let sink: Promise<Record<string, string>> | undefined

/** The services' OTEL_* environment: none unless BENCH_TRACING=1. */
export async function tracingEnv (): Promise<Record<string, string>> {
  if (process.env.BENCH_TRACING !== '1') return {}
  sink ??= new Promise((resolve) => {
    const server = createServer((request, response) => {
      request.resume()
      request.on('end', () => response.end())
    })
    server.listen(0, '127.0.0.1', () => {
      server.unref()
      resolve({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, OTEL_TRACES_SAMPLER: 'always_on' })
    })
  })
  return await sink
}
