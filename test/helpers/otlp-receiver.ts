import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

// A small OTLP/HTTP receiver: what a collector is to the service. OTLP/JSON is decoded
// (ids in hex, as the specification writes them); a protobuf export is kept as bytes.

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  attributes: Record<string, unknown>
  links: Array<{ traceId: string, spanId: string }>
  /** The resource's service.name. */
  service: unknown
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string
  spans: ReceivedSpan[]
  /** Every export as it arrived: its path, content type and body. */
  exports: Array<{ path: string, contentType: string, body: Buffer }>
}

type KeyValue = { key: string, value: Record<string, unknown> }
const flat = (attributes: KeyValue[] = []): Record<string, unknown> =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, Object.values(value)[0]]))

export async function startOtlpReceiver (t: Pick<Test, 'teardown'>): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const exports: OtlpReceiver['exports'] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const contentType = request.headers['content-type'] ?? ''
      const body = Buffer.concat(chunks)
      exports.push({ path: request.url ?? '', contentType, body })
      if (contentType.startsWith('application/json')) {
        for (const resourceSpans of JSON.parse(body.toString('utf8')).resourceSpans ?? []) {
          const service = flat(resourceSpans.resource?.attributes)['service.name']
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId === '' ? undefined : span.parentSpanId,
                name: span.name,
                attributes: flat(span.attributes),
                links: (span.links ?? []).map(({ traceId, spanId }: { traceId: string, spanId: string }) => ({ traceId, spanId })),
                service
              })
            }
          }
        }
        response.setHeader('content-type', 'application/json')
        response.end('{}')
      } else {
        response.setHeader('content-type', 'application/x-protobuf')
        response.end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, exports }
}
