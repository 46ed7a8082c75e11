/**
 * The bench's floor: bare `node:http` doing, for each request, the work the service
 * cannot skip, with the service's own pieces: the bearer token hashed and compared by
 * the token registry, a body read by the service's JSON parser and checked against
 * the compiled NewPlant schema, plants kept in a Map. No Fastify, hooks, logging,
 * metrics or durable store: the gap to the real service is what those add. Its routes
 * are the ones the scenarios call: POST /plants, GET /plants/{id} (a Map lookup) and
 * GET /plants?limit=100 (the same 100 plants, serialized from memory). Run as its own
 * process: the baseline rows of bench/scenarios.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { NewPlant, type StoredPlant } from '../schemas/index.ts'
import { ALL_SCOPES } from '../schemas/scopes.ts'
import { parseJsonBody } from '../src/http/json-body.ts'
import { hashToken, TokenRegistry } from '../src/tokens/registry.ts'

const registry = new TokenRegistry([{ name: 'bench', hash: hashToken(process.env.API_TOKENS ?? ''), scopes: new Set(ALL_SCOPES) }])
const isNewPlant = TypeCompiler.Compile(NewPlant)
const plants = new Map<bigint, StoredPlant>()
// Ascending ids, as the service pages them; kept up to date lazily, since only the page reads it.
let ordered: StoredPlant[] | undefined

const JSON_TYPE = 'application/json; charset=utf-8'
const PAGE = 100

function answer (response: ServerResponse, status: number, payload?: string): void {
  if (payload === undefined) {
    response.writeHead(status).end()
    return
  }
  response.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(payload) })
  response.end(payload)
}

function stored ({ id, name, tag }: StoredPlant): string {
  return `{"id":${id},"name":${JSON.stringify(name)}${tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`}}`
}

function create (request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    let plant: unknown
    try {
      plant = parseJsonBody(Buffer.concat(chunks))
    } catch {
      answer(response, 400)
      return
    }
    if (!isNewPlant.Check(plant)) {
      answer(response, 400)
      return
    }
    const { id, name, tag } = plant as { id: bigint | number, name: string, tag?: string }
    const key = BigInt(id)
    plants.set(key, tag === undefined ? { id: key, name } : { id: key, name, tag })
    ordered = undefined
    answer(response, 200, JSON.stringify({ name, tag }))
  })
}

function page (response: ServerResponse): void {
  ordered ??= [...plants.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  answer(response, 200, `[${ordered.slice(0, PAGE).map(stored).join(',')}]`)
}

const server = createServer((request, response) => {
  const header = request.headers.authorization
  if (header === undefined || !header.startsWith('Bearer ') || registry.identify(header.slice(7)) === undefined) {
    answer(response, 401)
    return
  }
  const url = request.url ?? ''
  if (request.method === 'POST' && url === '/plants') return create(request, response)
  if (request.method === 'GET' && url === `/plants?limit=${PAGE}`) return page(response)
  const id = request.method === 'GET' && /^\/plants\/-?\d{1,19}$/.test(url) ? BigInt(url.slice('/plants/'.length)) : undefined
  if (id !== undefined) {
    const plant = plants.get(id)
    answer(response, plant === undefined ? 404 : 200, plant === undefined ? undefined : stored(plant))
    return
  }
  answer(response, 404)
})

server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1')
