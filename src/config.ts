import { getHeapStatistics } from 'node:v8'
import type { Env } from '../schemas/env.ts'
import { MAX_SUBSCRIPTIONS } from '../schemas/webhook.ts'
import { validated } from './config/env.ts'
import { ConfigError } from './config/error.ts'
import { secretsOf } from './config/secrets.ts'
import { apiTokens, everyScope, fileTokens } from './config/tokens.ts'
import { corsOrigins, CONNECTIONS_SHARE_OF_FILES, database, proxies, WEBHOOKS_SHARE_OF_FILES, withinFiles } from './config/values.ts'
import { openFileLimit } from './process/open-files.ts'
import { PROJECT_DIR } from './process/project.ts'
import type { DatabaseConfig } from './store/open.ts'
import { freshToken } from './tokens/dev-token.ts'
import type { Token } from './tokens/registry.ts'

export { ConfigError } from './config/error.ts'

// Variables read only to compute a value below: the code reads that value, never the variable.
type Computed = 'API_TOKENS' | 'API_TOKENS_FILE' | 'TRUST_PROXY' | 'CORS_ORIGINS' | 'MAX_CONNECTIONS' | 'MAX_HEAP_USED_PERCENT' |
  'DATABASE_URL' | 'DATABASE_POOL_SIZE' | 'DATABASE_PREPARED_STATEMENTS' | 'WEBHOOK_CONCURRENCY'

/** What the environment says, checked: each variable of schemas/env.ts as it was given, and the values computed from them. */
export type Config = Readonly<Omit<Env, Computed> & {
  /** The tokens accepted at start: those of API_TOKENS_FILE, else of API_TOKENS (every scope), else the generated one. */
  tokens: Token[]
  /** API_TOKENS_FILE, read again on SIGHUP; unset when the tokens come from API_TOKENS. */
  tokensFile?: string
  /** Set when neither API_TOKENS nor API_TOKENS_FILE was given: the token this run accepts instead. */
  generatedToken?: string
  /** What no log line may show: the tokens in clear and the database password. */
  secrets: string[]
  database: DatabaseConfig
  /** Addresses or CIDR ranges of proxies whose X-Forwarded-* and X-Request-Id headers are believed. */
  trustProxy: string[]
  /** The exact origins whose pages may call the API (CORS), or ['*'] for any; none: no CORS. */
  corsOrigins: string[]
  /** MAX_CONNECTIONS within its share of the open-file limit. */
  maxConnections: number
  /** MAX_HEAP_USED_PERCENT of V8's heap limit, in bytes; 0: no check. */
  maxHeapUsedBytes: number
  /** WEBHOOK_CONCURRENCY within its share of the open-file limit. */
  webhookConcurrency: number
  /** How long closing waits for webhook attempts in flight before cutting them off. */
  webhookCloseWaitMs: number
}>

declare module 'fastify' {
  interface FastifyInstance {
    /** The one configuration, read at start: plugins take what they need from it. */
    config: Config
  }
}

/** The store DATABASE_URL names, as the service would open it: for the store's commands. */
export function databaseConfig (env: NodeJS.ProcessEnv = process.env): DatabaseConfig {
  return databaseOf(validated(env), env)
}

// The default database is the project's, whatever the working directory; a relative
// path set in DATABASE_URL is the working directory's, as usual.
function databaseOf (e: Env, env: NodeJS.ProcessEnv): DatabaseConfig {
  const location = database(e.DATABASE_URL, e.DATABASE_POOL_SIZE, env.DATABASE_URL === undefined || env.DATABASE_URL === '' ? PROJECT_DIR : undefined)
  return location.engine === 'postgres' ? { ...location, preparedStatements: e.DATABASE_PREPARED_STATEMENTS } : location
}

/**
 * Reads the environment once, at start; a bad value throws a ConfigError naming it.
 * `devToken`: the token accepted when neither API_TOKENS nor API_TOKENS_FILE is set.
 */
export function loadConfig (env: NodeJS.ProcessEnv = process.env, devToken: (database: DatabaseConfig) => string = freshToken): Config {
  const e = validated(env)
  const {
    API_TOKENS, API_TOKENS_FILE, TRUST_PROXY, CORS_ORIGINS, MAX_CONNECTIONS, MAX_HEAP_USED_PERCENT,
    DATABASE_URL, DATABASE_POOL_SIZE, DATABASE_PREPARED_STATEMENTS, WEBHOOK_CONCURRENCY, ...variables
  } = e
  const store = databaseOf(e, env)
  const values = apiTokens(API_TOKENS)
  const tokensFile = API_TOKENS_FILE === '' ? undefined : API_TOKENS_FILE
  if (tokensFile !== undefined && values.length > 0) {
    throw new ConfigError('API_TOKENS and API_TOKENS_FILE are both set: use one, the file for tokens with scopes')
  }
  const generatedToken = tokensFile === undefined && values.length === 0 ? devToken(store) : undefined
  const inClear = generatedToken === undefined ? values : [generatedToken]
  if (e.HEADERS_TIMEOUT_MS > e.REQUEST_TIMEOUT_MS) {
    throw new ConfigError('HEADERS_TIMEOUT_MS must not be larger than REQUEST_TIMEOUT_MS')
  }
  if (e.BODY_BYTES_IN_FLIGHT < e.BODY_LIMIT) {
    throw new ConfigError('BODY_BYTES_IN_FLIGHT must be at least BODY_LIMIT, or a body of the largest size would never be read')
  }
  if (e.SHUTDOWN_DELAY_MS >= e.SHUTDOWN_GRACE_MS) {
    throw new ConfigError('SHUTDOWN_DELAY_MS must be shorter than SHUTDOWN_GRACE_MS, which bounds the whole shutdown, the delay included')
  }
  const openFiles = openFileLimit()
  return Object.freeze({
    ...variables,
    tokens: tokensFile === undefined
      ? inClear.map((value, i) => everyScope(generatedToken === undefined ? `API_TOKENS[${i + 1}]` : 'generated', value))
      : fileTokens(tokensFile),
    tokensFile,
    generatedToken,
    secrets: secretsOf(inClear, store),
    database: store,
    trustProxy: proxies(TRUST_PROXY),
    corsOrigins: corsOrigins(CORS_ORIGINS),
    maxConnections: withinFiles(MAX_CONNECTIONS, openFiles, CONNECTIONS_SHARE_OF_FILES),
    // Refusing work near the heap's limit beats dying of it.
    maxHeapUsedBytes: Math.floor(MAX_HEAP_USED_PERCENT / 100 * getHeapStatistics().heap_size_limit),
    // Per subscription: the most subscriptions there can be share the webhooks' files.
    webhookConcurrency: withinFiles(WEBHOOK_CONCURRENCY, openFiles, WEBHOOKS_SHARE_OF_FILES / MAX_SUBSCRIPTIONS),
    // Half of the grace left after the delay; the rest is for queued writes and the store.
    webhookCloseWaitMs: Math.floor((e.SHUTDOWN_GRACE_MS - e.SHUTDOWN_DELAY_MS) / 2)
  })
}
