/**
 * The framework's own speed: the baseline's work (bench/baseline.ts: the service's token
 * check, JSON parser and NewPlant schema, a Map), done through Fastify as the service
 * does it: the service's content-type parser and validator compiler, the token checked
 * in an onRequest hook, the path's id validated into a bigint, answers through the
 * compiled serializers of the service's schemas. No logging and none of the service's
 * other hooks: between these rows and the service's lies what the service adds; between
 * them and the baseline's, what Fastify costs.
 */
import Fastify from 'fastify'
import { NewPlant, Plant, PlantIdParams, PlantListQuery, ref, sharedSchemas, StoredPlant } from '../schemas/index.ts'
import { ALL_SCOPES } from '../schemas/scopes.ts'
import { parseJsonBody } from '../src/http/json-body.ts'
import { buildValidatorCompiler } from '../src/http/validation.ts'
import { listPlants } from '../src/plants/route-schemas.ts'
import { hashToken, TokenRegistry } from '../src/tokens/registry.ts'

const registry = new TokenRegistry([{ name: 'bench', hash: hashToken(process.env.API_TOKENS ?? ''), scopes: new Set(ALL_SCOPES) }])
const plants = new Map<bigint, StoredPlant>()
// Ascending ids, as the service pages them; kept up to date lazily, as the baseline does.
let ordered: StoredPlant[] | undefined
const DEFAULT_LIMIT: number = PlantListQuery.properties.limit.default

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
  ordered = undefined
  return { name, tag }
})

app.get('/plants/:id', { schema: { params: PlantIdParams, response: { 200: ref(StoredPlant) } } }, async (request, reply) => {
  const plant = plants.get((request.params as { id: bigint }).id)
  if (plant === undefined) reply.callNotFound()
  return plant
})

app.get('/plants', { schema: { querystring: PlantListQuery, response: { 200: listPlants.response[200] } } }, async (request) => {
  ordered ??= [...plants.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return ordered.slice(0, (request.query as { limit?: number }).limit ?? DEFAULT_LIMIT)
})

await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
