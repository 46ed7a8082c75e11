import { getHeapStatistics } from 'node:v8'
import type { Env } from '../schemas/env.ts'
import { MAX_SUBSCRIPTIONS } from '../schemas/webhook.ts'
import { validated } from './config/env.ts'
import { ConfigError } from './config/error.ts'
import { apiTokens, everyScope, fileTokens } from './config/tokens.ts'
import { corsOrigins, CONNECTIONS_SHARE_OF_FILES, database, proxies, WEBHOOKS_SHARE_OF_FILES, withinFiles } from './config/values.ts'
import { openFileLimit } from './process/open-files.ts'
import { PROJECT_DIR } from './process/project.ts'
import type { DatabaseConfig } from './store/open.ts'
import { freshToken } from './tokens/dev-token.ts'
import type { Token } from './tokens/registry.ts'
import type { WebhookSettings } from './webhooks/plugin.ts'

export { ConfigError } from './config/error.ts'

export interface Config {
  host: string
  port: number
  /** The tokens accepted at start: those of API_TOKENS_FILE, else of API_TOKENS (every scope), else the generated one. */
  tokens: Token[]
  /** API_TOKENS_FILE, read again on SIGHUP; unset when the tokens come from API_TOKENS. */
  tokensFile?: string
  /** The values of API_TOKENS or the generated token, kept only to cut them out of logged errors; none with a tokens file. */
  apiTokens: string[]
  /** Set when neither API_TOKENS nor API_TOKENS_FILE was given: the token this run accepts instead. */
  generatedToken?: string
  logLevel: Env['LOG_LEVEL']
  bodyLimit: number
  /** The most bytes of request bodies being received at once; past it a new body answers 503. */
  bodyBytesInFlight: number
  database: DatabaseConfig
  /** The most writes one group-commit transaction holds; 1 turns group commit off. */
  groupCommitMaxBatch: number
  /** The most bytes of plants that may wait for the store; past it a create answers 503 at once. */
  writeQueueLimitBytes: number
  limits: Limits
  /** Addresses or CIDR ranges of proxies whose X-Forwarded-* and X-Request-Id headers are believed. */
  trustProxy: string[]
  /** The exact origins whose pages may call the API (CORS), or ['*'] for any; none: no CORS. */
  corsOrigins: string[]
  /** How long a shutdown may take before the process exits non-zero anyway. */
  shutdownGraceMs: number
  /** How long the service goes on serving once told to stop, not ready, before it stops accepting; part of the grace. */
  shutdownDelayMs: number
  metricsRequireToken: boolean
  /** How long one computed /metrics answer serves every scrape. */
  metricsCacheMs: number
  /** The change feed's readers that may wait or stream at once: in all, and per token. */
  changes: { maxReaders: number, maxReadersPerToken: number }
  webhooks: WebhookSettings
}

export interface Limits {
  /** Requests per second one token may make; 0 turns the limit off. */
  ratePerToken: number
  /** Rejected tokens one client address may send per minute before it is refused with 429. */
  authFailuresPerMinute: number
  requestTimeoutMs: number
  headersTimeoutMs: number
  keepAliveTimeoutMs: number
  /** A connection on which nothing moves for this long while a request is handled or answered is closed. */
  sendTimeoutMs: number
  /** Client connections open at once; past it, a new one is closed as it is accepted. */
  maxConnections: number
  /** Event-loop delay above which requests are refused with 503; 0 turns the check off. */
  maxEventLoopDelayMs: number
  /** Heap use above which requests are refused with 503; 0 turns the check off. */
  maxHeapUsedBytes: number
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
  const store = databaseOf(e, env)
  const values = apiTokens(e.API_TOKENS)
  const tokensFile = e.API_TOKENS_FILE === '' ? undefined : e.API_TOKENS_FILE
  if (tokensFile !== undefined && values.length > 0) {
    throw new ConfigError('API_TOKENS and API_TOKENS_FILE are both set: use one, the file for tokens with scopes')
  }
  const generatedToken = tokensFile === undefined && values.length === 0 ? devToken(store) : undefined
  const secrets = generatedToken === undefined ? values : [generatedToken]
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
  return {
    host: e.HOST,
    port: e.PORT,
    tokens: tokensFile === undefined
      ? secrets.map((value, i) => everyScope(generatedToken === undefined ? `API_TOKENS[${i + 1}]` : 'generated', value))
      : fileTokens(tokensFile),
    tokensFile,
    apiTokens: secrets,
    generatedToken,
    logLevel: e.LOG_LEVEL,
    bodyLimit: e.BODY_LIMIT,
    bodyBytesInFlight: e.BODY_BYTES_IN_FLIGHT,
    database: store,
    groupCommitMaxBatch: e.GROUP_COMMIT_MAX_BATCH,
    writeQueueLimitBytes: e.WRITE_QUEUE_LIMIT_BYTES,
    limits: {
      ratePerToken: e.RATE_LIMIT_PER_TOKEN,
      authFailuresPerMinute: e.AUTH_FAILURE_LIMIT,
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
      keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
      sendTimeoutMs: e.SEND_TIMEOUT_MS,
      maxConnections: withinFiles(e.MAX_CONNECTIONS, openFiles, CONNECTIONS_SHARE_OF_FILES),
      maxEventLoopDelayMs: e.MAX_EVENT_LOOP_DELAY_MS,
      // Refusing work near the heap's limit beats dying of it.
      maxHeapUsedBytes: Math.floor(e.MAX_HEAP_USED_PERCENT / 100 * getHeapStatistics().heap_size_limit)
    },
    trustProxy: proxies(e.TRUST_PROXY),
    corsOrigins: corsOrigins(e.CORS_ORIGINS),
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
    metricsRequireToken: e.METRICS_REQUIRE_TOKEN,
    metricsCacheMs: e.METRICS_CACHE_MS,
    changes: { maxReaders: e.CHANGES_MAX_READERS, maxReadersPerToken: e.CHANGES_MAX_READERS_PER_TOKEN },
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
      maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
      // Per subscription: the most subscriptions there can be share the webhooks' files.
      concurrency: withinFiles(e.WEBHOOK_CONCURRENCY, openFiles, WEBHOOKS_SHARE_OF_FILES / MAX_SUBSCRIPTIONS),
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      maxPending: e.WEBHOOK_MAX_PENDING,
      // Half of the grace left after the delay; the rest is for queued writes and the store.
      closeWaitMs: Math.floor((e.SHUTDOWN_GRACE_MS - e.SHUTDOWN_DELAY_MS) / 2)
    }
  }
}
