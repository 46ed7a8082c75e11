import { join } from 'node:path'
import { getHeapStatistics } from 'node:v8'
import proxyAddr from '@fastify/proxy-addr'
import type { TSchema } from '@sinclair/typebox'
import envSchema from 'env-schema'
import { Env } from '../schemas/env.ts'
import { ALL_SCOPES } from '../schemas/scopes.ts'
import { MAX_SUBSCRIPTIONS } from '../schemas/webhook.ts'
import { openFileLimit } from './process/open-files.ts'
import { PROJECT_DIR } from './process/project.ts'
import type { DatabaseConfig } from './store/open.ts'
import { freshToken } from './tokens/dev-token.ts'
import { loadTokensFile, TokensFileError } from './tokens/file.ts'
import { hashToken, type Token } from './tokens/registry.ts'
import { tokenFault } from './tokens/rules.ts'
import type { WebhookSettings } from './webhooks/plugin.ts'

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

export class ConfigError extends Error {}

/**
 * Reads the environment once, at start; a bad value stops the start with a message naming
 * it. With neither API_TOKENS nor API_TOKENS_FILE, the run accepts `devToken(database)`:
 * a fresh token unless the entry point keeps one (src/tokens/dev-token.ts).
 */
export function loadConfig (env: NodeJS.ProcessEnv = process.env, devToken: (database: DatabaseConfig) => string = freshToken): Config {
  const e = validated(env)
  // The default database is the project's, whatever the working directory; a relative
  // path set in DATABASE_URL is the working directory's, as usual.
  const store = database(e.DATABASE_URL, e.DATABASE_POOL_SIZE, env.DATABASE_URL === undefined || env.DATABASE_URL === '' ? PROJECT_DIR : undefined)
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
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
      maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
      // Per subscription: the most subscriptions there can be share the webhooks' files.
      concurrency: withinFiles(e.WEBHOOK_CONCURRENCY, openFiles, WEBHOOKS_SHARE_OF_FILES / MAX_SUBSCRIPTIONS),
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      // Half of the grace left after the delay for receivers; the rest for the writes
      // still queued and the store.
      closeWaitMs: Math.floor((e.SHUTDOWN_GRACE_MS - e.SHUTDOWN_DELAY_MS) / 2)
    }
  }
}

// Numbers are written in decimal digits. Ajv's coercion read "Infinity" and "1e400" as
// Infinity, which passes its bounds (a grace of Infinity ms fired at once), " " as 0
// (the rate limit off), and "0x10" as 16.
const NUMERALS: Record<string, RegExp> = { integer: /^-?\d{1,20}$/, number: /^-?\d{1,20}(\.\d{1,20})?$/ }
// A refusal quotes at most this much of the value.
const MAX_QUOTED = 100

/**
 * The environment checked against its schema by env-schema (defaults filled in, numbers
 * and booleans read from their text, numbers only from decimal digits). An empty variable
 * counts as unset, and a refusal names the variable, what it must be and what it was.
 */
function validated (env: NodeJS.ProcessEnv): Env {
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''))
  const properties: Record<string, TSchema> = Env.properties
  for (const [name, value] of Object.entries(given)) {
    const numeral = NUMERALS[properties[name]?.type as string]
    if (numeral !== undefined && !numeral.test(value!)) throw refusal(name, properties[name], value!)
  }
  try {
    return envSchema<Env>({ schema: structuredClone(Env), data: given, env: false })
  } catch (err) {
    const [first] = (err as { errors?: Array<{ instancePath: string }> }).errors ?? []
    const name = first?.instancePath.slice(1)
    const property: TSchema | undefined = properties[name]
    if (property === undefined) throw err
    throw refusal(name, property, env[name] ?? '')
  }
}

function refusal (name: string, property: TSchema, value: string): ConfigError {
  const quoted = JSON.stringify(value.length > MAX_QUOTED ? `${value.slice(0, MAX_QUOTED)}…` : value)
  return new ConfigError(`${name} must be ${expected(property)}; got ${quoted}`)
}

function expected (schema: TSchema): string {
  if (schema.enum !== undefined) return `one of ${(schema.enum as string[]).join(', ')}`
  if (schema.type === 'integer') return `a whole number from ${schema.minimum} to ${schema.maximum}`
  if (schema.type === 'number') return `a number from ${schema.minimum} to ${schema.maximum}`
  return 'true or false'
}

function apiTokens (raw: string): string[] {
  const tokens = raw.split(',').map((t) => t.trim()).filter((t) => t !== '')
  tokens.forEach((token, i) => {
    const fault = tokenFault(token)
    if (fault !== undefined) throw new ConfigError(`API_TOKENS: token ${i + 1} ${fault}`)
  })
  return tokens
}

function fileTokens (file: string): Token[] {
  try {
    return loadTokensFile(file)
  } catch (err) {
    throw new ConfigError(`API_TOKENS_FILE ${(err as TokensFileError).message}`)
  }
}

// API_TOKENS predates scopes: each of its tokens, and the generated one, may do everything.
function everyScope (name: string, value: string): Token {
  return { name, hash: hashToken(value), scopes: new Set(ALL_SCOPES) }
}

/** What no log line may show: the tokens, and the database password in each form it may be written. */
export function secretsOf (config: Config): string[] {
  const secrets = [...config.apiTokens]
  if (config.database.engine !== 'postgres') return secrets
  let url: URL
  try {
    url = new URL(config.database.url)
  } catch {
    return secrets // the driver will refuse it; nothing to find in it
  }
  for (const raw of [url.password, url.searchParams.get('password') ?? '']) {
    if (raw === '') continue
    secrets.push(raw)
    try {
      secrets.push(decodeURIComponent(raw))
    } catch {}
  }
  return secrets
}

function proxies (raw: string): string[] {
  const list = raw.split(',').map((a) => a.trim()).filter((a) => a !== '')
  try {
    proxyAddr.compile(list)
  } catch (err) {
    throw new ConfigError(`TRUST_PROXY must list IP addresses, CIDR ranges, loopback, linklocal or uniquelocal: ${(err as Error).message}`)
  }
  return list
}

// A browser sends its page's origin serialized (RFC 6454): a listed one must be written
// the same way, or it would never match.
function corsOrigins (raw: string): string[] {
  const list = raw.split(',').map((o) => o.trim()).filter((o) => o !== '')
  if (list.includes('*') && list.length > 1) {
    throw new ConfigError('CORS_ORIGINS: * allows every origin and cannot be listed with others')
  }
  for (const origin of list) {
    const serialized = origin === '*' ? origin : webOrigin(origin)
    if (serialized !== origin) {
      throw new ConfigError('CORS_ORIGINS must be * or list origins as a browser sends them (http or https, host, ' +
        `optional port, no path: https://app.example.com); got ${JSON.stringify(origin)}` +
        (serialized === undefined ? '' : `, which as an origin is ${JSON.stringify(serialized)}`))
    }
  }
  return list
}

// A host a browser can be at: a name (punycode, as URL writes it) or an address, never
// a pattern such as *.example.com, which URL would take as a name.
const HOST = /^(?:[a-z0-9._-]+|\[[0-9a-f:.]+\])$/

function webOrigin (text: string): string | undefined {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && HOST.test(url.hostname) ? url.origin : undefined
  } catch {
    return undefined
  }
}

// Of the files the process may open, the shares client connections and webhook attempts
// (a connection each, kept alive between attempts) may take: the rest, at least a tenth,
// stay for the store, the log and the runtime's own. A file that cannot be opened fails
// one statement or attempt, and each of these is bounded, so no one of them starves the
// others: 20,000 idle connections from one client, or 8 subscriptions to a receiver that
// held its connections, took every file.
const CONNECTIONS_SHARE_OF_FILES = 0.8
const WEBHOOKS_SHARE_OF_FILES = 0.1

/** A setting's value, lowered (to at least 1) to `share` of the open-file limit when the limit is known. */
function withinFiles (wanted: number, openFiles: number | undefined, share: number): number {
  return openFiles === undefined ? wanted : Math.max(1, Math.min(wanted, Math.floor(openFiles * share)))
}

/** `dir`: where a relative SQLite path is; the working directory when unset. */
function database (url: string, poolSize: number, dir?: string): DatabaseConfig {
  if (url === 'memory:') return { engine: 'memory' }
  if (/^postgres(ql)?:\/\/./.test(url)) return { engine: 'postgres', url, poolSize }
  if (url.startsWith('sqlite:') && url.length > 'sqlite:'.length) {
    const path = url.slice('sqlite:'.length)
    return { engine: 'sqlite', path: dir === undefined ? path : join(dir, path) }
  }
  // Only the scheme is echoed: a URL may hold a password.
  const got = url.includes(':') ? `a URL starting ${JSON.stringify(url.split(':', 1)[0] + ':')}` : 'a value with no scheme'
  throw new ConfigError(`DATABASE_URL must be sqlite:<path>, postgres://… or memory:; got ${got}`)
}
