import { randomBytes } from 'node:crypto'

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
}

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
// RFC 6750 token68: what may follow "Bearer " in an Authorization header.
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/

/** Reads the environment once, at start; a bad value stops the start with a message saying which. */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const tokens = (env.API_TOKENS ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '')
  tokens.forEach((token, i) => {
    if (!TOKEN68.test(token)) {
      throw new ConfigError(`API_TOKENS: token ${i + 1} has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)`)
    }
  })
  const generatedToken = tokens.length === 0 ? randomBytes(24).toString('base64url') : undefined
  const logLevel = env.LOG_LEVEL ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(logLevel)}`)
  }
  return {
    host: env.HOST ?? '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    apiTokens: generatedToken === undefined ? tokens : [generatedToken],
    generatedToken,
    logLevel,
    bodyLimit: integer(env, 'BODY_LIMIT', 1024 * 1024, 1, 2 ** 31 - 1),
    database: parseDatabaseUrl(env.DATABASE_URL ?? 'sqlite:data/plants.db', integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000))
  }
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
