/**
 * The `framework` rows' server: bare Fastify doing the work no version of the service can skip: the bearer
 * token checked by @fastify/bearer-auth, the body parsed by lossless-json (exact int64, duplicate keys
 * refused), validated by the service's validator compiler against its schemas, answered through the compiled
 * serializers, plants kept in a Map. No logging, metrics or store: the service's ratio to these rows is what those cost.
 */
import bearerAuth from '@fastify/bearer-auth'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import { parse } from 'lossless-json'
import { NewPlant, Plant, PlantIdParams, PlantListQuery, PlantUpdate, ref, sharedSchemas, StoredPlant } from '../schemas/index.ts'
import { buildValidatorCompiler } from '../src/http/validation.ts'

const plants = new Map<bigint, StoredPlant>()
// Ascending ids, as the service pages them; sorted again only after a create.
let ordered: StoredPlant[] | undefined

const app = Fastify({ logger: false })
app.setValidatorCompiler(buildValidatorCompiler(sharedSchemas))
for (const schema of sharedSchemas) app.addSchema(schema)
app.removeAllContentTypeParsers()
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
  try {
    done(null, parse(body as string, null, {
      parseNumber: (text) => /^-?\d+$/.test(text) && !Number.isSafeInteger(Number(text)) ? BigInt(text) : Number(text),
      onDuplicateKey: ({ key }) => { throw new SyntaxError(`duplicate key ${key}`) }
    }))
  } catch (err) {
    done(Object.assign(err as Error, { statusCode: 400 }))
  }
})
await app.register(bearerAuth, { keys: new Set([process.env.API_TOKENS ?? '']) })

app.post('/plants', { schema: { body: ref(NewPlant), response: { 200: ref(Plant) } } }, async (request) => {
  const { id, name, tag } = request.body as StoredPlant
  plants.set(id, tag === undefined ? { id, name } : { id, name, tag })
  ordered = undefined
  return { name, tag }
})

app.put('/plants/:id', { schema: { params: PlantIdParams, body: ref(PlantUpdate), response: { 200: ref(StoredPlant) } } }, async (request, reply) => {
  const { id } = request.params as { id: bigint }
  if (!plants.has(id)) return reply.callNotFound()
  const { name, tag } = request.body as PlantUpdate
  const plant = tag === undefined ? { id, name } : { id, name, tag }
  plants.set(id, plant)
  ordered = undefined
  return plant
})

app.get('/plants/:id', { schema: { params: PlantIdParams, response: { 200: ref(StoredPlant) } } }, async (request, reply) => {
  const plant = plants.get((request.params as { id: bigint }).id)
  if (plant === undefined) return reply.callNotFound()
  return plant
})

app.get('/plants', { schema: { querystring: PlantListQuery, response: { 200: Type.Array(ref(StoredPlant)) } } }, async (request) => {
  ordered ??= [...plants.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return ordered.slice(0, (request.query as { limit?: number }).limit ?? 100)
})

// A clean exit on the bench's SIGTERM, so that --cpu-prof (BENCH_PROFILE) writes its profile.
process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
