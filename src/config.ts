import { randomBytes } from 'node:crypto'
import { getHeapStatistics } from 'node:v8'
import proxyAddr from '@fastify/proxy-addr'

/** Where plants are kept, parsed from DATABASE_URL. */
export type DatabaseConfig =
  | { engine: 'memory' }
  | { engine: 'sqlite', path: string }
  | { engine: 'postgres', url: string, poolSize: number }

export interface Config {
  host: string
  port: number
  /** Accepted bearer tokens; never empty. */
  apiTokens: string[]
  /** Set when API_TOKENS was empty and a token was made for this run. */
  generatedToken?: string
  logLevel: string
  bodyLimit: number
  database: DatabaseConfig
  /** The most writes one group-commit transaction holds; 1 turns group commit off. */
  groupCommitMaxBatch: number
  /** The most bytes of plants that may wait for the store; past it a create answers 503 at once. */
  writeQueueLimitBytes: number
  limits: Limits
  /** Addresses or CIDR ranges of proxies whose X-Forwarded-* and X-Request-Id headers are believed. */
  trustProxy: string[]
  /** How long a shutdown may take before the process exits non-zero anyway. */
  shutdownGraceMs: number
  metricsRequireToken: boolean
}

export interface Limits {
  /** Requests per second one token may make; 0 turns the limit off. */
  ratePerToken: number
  /** Rejected tokens one client address may send per minute before it is refused with 429. */
  authFailuresPerMinute: number
  requestTimeoutMs: number
  headersTimeoutMs: number
  keepAliveTimeoutMs: number
  /** Event-loop delay above which requests are refused with 503; 0 turns the check off. */
  maxEventLoopDelayMs: number
  /** Heap use above which requests are refused with 503; 0 turns the check off. */
  maxHeapUsedBytes: number
}

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
// RFC 6750 token68: what may follow "Bearer " in an Authorization header.
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/
// Shorter tokens can be guessed or remembered; generated ones are 32 characters.
const MIN_TOKEN_LENGTH = 16

/** Reads the environment once, at start; a bad value stops the start with a message saying which. */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const tokens = (env.API_TOKENS ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '')
  tokens.forEach((token, i) => {
    if (!TOKEN68.test(token)) {
      throw new ConfigError(`API_TOKENS: token ${i + 1} has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)`)
    }
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new ConfigError(`API_TOKENS: token ${i + 1} is ${token.length} characters long; a token needs at least ${MIN_TOKEN_LENGTH} to be secret`)
    }
  })
  const generatedToken = tokens.length === 0 ? randomBytes(24).toString('base64url') : undefined
  const logLevel = env.LOG_LEVEL ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(logLevel)}`)
  }
  const config: Config = {
    host: env.HOST ?? '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    apiTokens: generatedToken === undefined ? tokens : [generatedToken],
    generatedToken,
    logLevel,
    bodyLimit: integer(env, 'BODY_LIMIT', 1024 * 1024, 1, 2 ** 31 - 1),
    database: parseDatabaseUrl(env.DATABASE_URL ?? 'sqlite:data/plants.db', integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000)),
    groupCommitMaxBatch: integer(env, 'GROUP_COMMIT_MAX_BATCH', 512, 1, 100_000),
    writeQueueLimitBytes: integer(env, 'WRITE_QUEUE_LIMIT_BYTES', 16 * 1024 * 1024, 1024, 2 ** 31 - 1),
    limits: {
      ratePerToken: integer(env, 'RATE_LIMIT_PER_TOKEN', 50_000, 0, 1e9),
      authFailuresPerMinute: integer(env, 'AUTH_FAILURE_LIMIT', 30, 1, 1e9),
      requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1, 3_600_000),
      headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 1, 3_600_000),
      keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 5_000, 1, 3_600_000),
      maxEventLoopDelayMs: integer(env, 'MAX_EVENT_LOOP_DELAY_MS', 1_000, 0, 3_600_000),
      // Refusing work near the heap's limit beats dying of it: 90% of what V8 allows.
      maxHeapUsedBytes: integer(env, 'MAX_HEAP_USED_BYTES', Math.floor(0.9 * getHeapStatistics().heap_size_limit), 0, Number.MAX_SAFE_INTEGER)
    },
    trustProxy: proxies(env.TRUST_PROXY),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 1, 3_600_000),
    metricsRequireToken: boolean(env, 'METRICS_REQUIRE_TOKEN', false)
  }
  if (config.limits.headersTimeoutMs > config.limits.requestTimeoutMs) {
    throw new ConfigError('HEADERS_TIMEOUT_MS must not be larger than REQUEST_TIMEOUT_MS')
  }
  return config
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

function proxies (raw = ''): string[] {
  const list = raw.split(',').map((a) => a.trim()).filter((a) => a !== '')
  try {
    proxyAddr.compile(list)
  } catch (err) {
    throw new ConfigError(`TRUST_PROXY must list IP addresses, CIDR ranges, loopback, linklocal or uniquelocal: ${(err as Error).message}`)
  }
  return list
}

function boolean (env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (raw === 'true' || raw === '1') return true
  if (raw === 'false' || raw === '0') return false
  throw new ConfigError(`${name} must be true or false; got ${JSON.stringify(raw)}`)
}

function parseDatabaseUrl (url: string, poolSize: number): DatabaseConfig {
  if (url === 'memory:') return { engine: 'memory' }
  if (/^postgres(ql)?:\/\/./.test(url)) return { engine: 'postgres', url, poolSize }
  if (url.startsWith('sqlite:') && url.length > 'sqlite:'.length) return { engine: 'sqlite', path: url.slice('sqlite:'.length) }
  // Only the scheme is echoed: a URL may hold a password.
  throw new ConfigError(`DATABASE_URL must be sqlite:<path>, postgres://… or memory:; got a URL starting ${JSON.stringify(url.split(':', 1)[0] + ':')}`)
}

function integer (env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got ${JSON.stringify(raw)}`)
  }
  return value
}
