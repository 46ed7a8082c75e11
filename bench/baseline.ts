/**
 * The bench's floor: what node:http alone costs for POST /plants on this machine.
 * No validation, auth, logging or storage, so the gap to the real service is what
 * Fastify, the contract and the store add. Run as its own process: the baseline row
 * of bench/scenarios.ts.
 */
import { createServer } from 'node:http'

const server = createServer((request, response) => {
  if (request.method !== 'POST' || request.url !== '/plants') {
    response.writeHead(404).end()
    return
  }
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    let plant: { name?: unknown, tag?: unknown }
    try {
      plant = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      response.writeHead(400).end()
      return
    }
    const payload = JSON.stringify({ name: plant.name, tag: plant.tag })
    // The same headers Fastify sends, so both answers cost the client the same to read.
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(payload)
    })
    response.end(payload)
  })
})

server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1')
