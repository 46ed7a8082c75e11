/**
 * The framework's own speed: the create baseline's work (bench/baseline.ts: the
 * service's token check, JSON parser and NewPlant schema, a Map), done through Fastify
 * as the service does it: the service's content-type parser and validator compiler, the
 * token checked in an onRequest hook, the answer through the compiled Plant serializer.
 * No logging and none of the service's other hooks: between this row and the service's
 * rows lies what the service adds; between it and the baseline, what Fastify costs.
 */
import Fastify from 'fastify'
import { NewPlant, Plant, ref, sharedSchemas, type StoredPlant } from '../schemas/index.js'
import { ALL_SCOPES } from '../schemas/scopes.js'
import { parseJsonBody } from '../src/http/json-body.js'
import { buildValidatorCompiler } from '../src/http/validation.js'
import { hashToken, TokenRegistry } from '../src/tokens/registry.js'

const registry = new TokenRegistry([{ name: 'bench', hash: hashToken(process.env.API_TOKENS ?? ''), scopes: new Set(ALL_SCOPES) }])
const plants = new Map<bigint, StoredPlant>()

const app = Fastify({ logger: false })
app.setValidatorCompiler(buildValidatorCompiler(sharedSchemas))
for (const schema of sharedSchemas) app.addSchema(schema)
app.removeAllContentTypeParsers()
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (_request: unknown, body: Buffer) => parseJsonBody(body))

app.addHook('onRequest', async (request, reply) => {
  const header = request.headers.authorization
  if (header === undefined || !header.startsWith('Bearer ') || registry.identify(header.slice(7)) === undefined) {
    await reply.code(401).send()
  }
})

app.post('/plants', { schema: { body: ref(NewPlant), response: { 200: ref(Plant) } } }, async (request) => {
  const { id, name, tag } = request.body as StoredPlant
  plants.set(id, tag === undefined ? { id, name } : { id, name, tag })
  return { name, tag }
})

await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
