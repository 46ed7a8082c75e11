import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { loadTokensFile, readableByOthers } from '../tokens/file.ts'
import { TokenRegistry, type Token } from '../tokens/registry.ts'

declare module 'fastify' {
  interface FastifyInstance {
    tokens: TokenRegistry
    /** Puts API_TOKENS_FILE's tokens in force again; a file that cannot be used is logged and changes nothing. */
    reloadTokens: () => boolean
  }
  interface FastifyRequest {
    /** The token the request presented, once identified (its name is in the request's log line). */
    token: Token | null
  }
}

// fastify-plugin: the app needs `reloadTokens` and every request its `token`; auth guards only the API.
async function tokens (app: FastifyInstance): Promise<void> {
  const { tokens: initial, tokensFile: file, generatedToken } = app.config
  const registry = new TokenRegistry(initial)
  const warnIfReadable = (): void => {
    const warning = file === undefined ? undefined : readableByOthers(file)
    if (warning !== undefined) app.log.warn(`API_TOKENS_FILE ${warning}`)
  }
  warnIfReadable()
  app.decorate('tokens', registry)
  app.decorateRequest('token', null)
  app.decorate('reloadTokens', () => {
    if (file === undefined) {
      app.log.warn(`no API_TOKENS_FILE to reload: ${generatedToken !== undefined ? 'the generated development token stays' : 'the tokens of API_TOKENS stay'} in force`)
      return false
    }
    try {
      registry.replace(loadTokensFile(file))
    } catch (err) {
      app.log.error({ err }, 'API_TOKENS_FILE not reloaded: the previous tokens stay in force')
      return false
    }
    app.log.info({ tokens: registry.names }, 'API_TOKENS_FILE reloaded: these tokens are in force')
    warnIfReadable()
    return true
  })
}

export default fp(tokens, { name: 'tokens', fastify: '5.x', decorators: { fastify: ['config'] } })
