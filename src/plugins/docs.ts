import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, RouteHandlerMethod } from 'fastify'
import fp from 'fastify-plugin'
import { documentedRequestHeaders, requiredHeaders } from '../../schemas/headers.ts'
import { errorExamples } from '../../schemas/index.ts'
import { SCOPES } from '../../schemas/scopes.ts'
import { plantWebhook } from '../../schemas/webhook.ts'
import { exactJsonAnswers } from './swagger-ui-exact-json.ts'

const description = `Keeps a store of plants. Every operation needs a bearer token
(\`Authorization: Bearer <token>\`) granted the scope its security requirement names;
the documentation and health routes do not.

Every error answers with the \`Error\` shape, \`{ "error": <HTTP status>, "message": <text> }\`.

Every plant created is announced to the webhook subscriptions (\`/webhooks\`) by the
\`plant.created\` webhook: a signed POST of the plant, retried until acknowledged.

Plant ids are signed 64-bit integers, written in every answer as exact JSON integers:
beyond 2^53 a client needs a JSON parser that keeps them exact (JavaScript's
\`JSON.parse\` rounds them).

In Swagger UI (\`/docs\`): **Authorize** with a token, then **Try it out** on an
operation. Its parameters and body come filled with the examples of this document
(the plant Monstera, id 1), and **Execute** sends them to the service this page was
loaded from: creates and deletes change its store.`

const bearerDescription = `The bearer token (in Swagger UI's Authorize dialog, the token alone, without \`Bearer \`): \
one of the service's API_TOKENS (every scope); \
one of its API_TOKENS_FILE, minted with \`npm run token\` (the scopes it was minted with); or, when neither is set, \
the token the service printed when it started (\`plant-store: … accepts the generated token …\`, every scope). \
Each operation's security requirement names the one scope it needs: ${Object.entries(SCOPES).map(([scope, what]) => `\`${scope}\`, ${what}`).join('; ')}. \
A token without that scope answers 403 with \`WWW-Authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"\`.`

/** Where Swagger UI and the OpenAPI document are served. */
export const DOCS_PREFIX = '/docs'
const INDEX_FILE = `${DOCS_PREFIX}/static/index.html`

// The public document never changes once the app is ready: encoded to bytes once rather
// than for every (unauthenticated) request, as @fastify/swagger-ui does.
const DOCUMENTS: Record<string, { type: string, encode: (app: FastifyInstance) => string } | undefined> = {
  [`${DOCS_PREFIX}/json`]: { type: 'application/json; charset=utf-8', encode: (app) => JSON.stringify(app.swagger()) },
  [`${DOCS_PREFIX}/yaml`]: { type: 'application/x-yaml', encode: (app) => app.swagger({ yaml: true }) }
}

function servedOnce (encode: () => string, type: string): RouteHandlerMethod {
  let bytes: Buffer | undefined
  return async (_request, reply) => {
    bytes ??= Buffer.from(encode())
    return await reply.type(type).send(bytes)
  }
}

/** The OpenAPI document from the routes' schemas, and Swagger UI at /docs, whose routes are pages (helmet's headers). */
async function docs (app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Plant Store',
        version: '1.0.0',
        description,
        license: { name: 'MIT', identifier: 'MIT' }
      },
      // Relative: "Try it out" calls whichever address serves the page.
      servers: [{ url: '/', description: 'This service, at the address this document was loaded from' }],
      components: {
        examples: errorExamples(),
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: bearerDescription }
        }
      },
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'plants', description: 'The store of plants' },
        { name: 'webhooks', description: 'Subscriptions to new plants, and the log of their deliveries' }
      ],
      webhooks: plantWebhook
    },
    // How schemas/headers.ts declares headers, written as OpenAPI has them.
    transform: documentedRequestHeaders,
    transformObject: (document) => 'openapiObject' in document ? requiredHeaders(document.openapiObject) : document.swaggerObject,
    // Name components after their $id (Plant, NewPlant, Error) rather than def-0, def-1…
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
    }
  })
  await app.register(async function ui (pages) {
    // Swagger UI's pages, assets and document are fetched by every browser that opens them.
    pages.addHook('onRoute', (route) => {
      route.config = { ...route.config, quietLog: true, page: true }
      const document = DOCUMENTS[route.url]
      if (document !== undefined) route.handler = servedOnce(() => document.encode(app), document.type)
      // Swagger UI's own redirect of its index file loops with a query or a trailing slash.
      if (route.url === INDEX_FILE) route.handler = async (_request, reply) => await reply.redirect(`${DOCS_PREFIX}/`)
    })
    // Swagger UI's base preset brings the plugins the default list names; this adds one.
    await pages.register(swaggerUi, { routePrefix: DOCS_PREFIX, uiConfig: { plugins: [exactJsonAnswers] } })
  })
}

export default fp(docs, { name: 'docs', fastify: '5.x' })
