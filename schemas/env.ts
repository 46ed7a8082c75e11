import { Type, type Static } from '@sinclair/typebox'
import { DEFAULT_MAX_PENDING } from './webhook.ts'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

const whole = (fallback: number, minimum: number, maximum: number) =>
  Type.Integer({ default: fallback, minimum, maximum })

/**
 * Every variable the service reads, with type, bounds and default (a test keeps the README
 * equal); what a schema cannot say is checked in src/config/.
 */
export const Env = Type.Object({
  HOST: Type.String({ default: '127.0.0.1' }),
  PORT: whole(3000, 0, 65535),
  API_TOKENS: Type.String({ default: '' }),
  API_TOKENS_FILE: Type.String({ default: '' }),
  LOG_LEVEL: Type.Unsafe<typeof LOG_LEVELS[number]>({ type: 'string', enum: [...LOG_LEVELS], default: 'info' }),
  // Bounds the work of parsing a body: 16 KiB holds the largest plant (13 KB) or subscription, fully \u-escaped.
  BODY_LIMIT: whole(16 * 1024, 1, 2 ** 31 - 1),
  // Bodies being received are Buffers outside the heap: 64 MiB is 4,096 bodies of the default BODY_LIMIT.
  BODY_BYTES_IN_FLIGHT: whole(64 * 1024 * 1024, 1, 2 ** 40),
  TRUST_PROXY: Type.String({ default: '' }),
  CORS_ORIGINS: Type.String({ default: '' }),
  RATE_LIMIT_PER_TOKEN: whole(50_000, 0, 1e9),
  AUTH_FAILURE_LIMIT: whole(30, 1, 1e9),
  REQUEST_TIMEOUT_MS: whole(30_000, 1, 3_600_000),
  HEADERS_TIMEOUT_MS: whole(10_000, 1, 3_600_000),
  KEEP_ALIVE_TIMEOUT_MS: whole(5_000, 1, 3_600_000),
  SEND_TIMEOUT_MS: whole(60_000, 1, 3_600_000),
  MAX_CONNECTIONS: whole(10_000, 1, 1_000_000),
  MAX_EVENT_LOOP_DELAY_MS: whole(1_000, 0, 3_600_000),
  MAX_HEAP_USED_PERCENT: Type.Number({ default: 90, minimum: 0, maximum: 100 }),
  GROUP_COMMIT_MAX_BATCH: whole(512, 1, 100_000),
  WRITE_QUEUE_LIMIT_BYTES: whole(16 * 1024 * 1024, 1024, 2 ** 31 - 1),
  SHUTDOWN_GRACE_MS: whole(10_000, 1, 3_600_000),
  SHUTDOWN_DELAY_MS: whole(0, 0, 3_600_000),
  METRICS_REQUIRE_TOKEN: Type.Boolean({ default: true }),
  METRICS_CACHE_MS: whole(1_000, 0, 60_000),
  DATABASE_URL: Type.String({ default: 'sqlite:data/plants.db' }),
  DATABASE_POOL_SIZE: whole(10, 1, 1000),
  DATABASE_PREPARED_STATEMENTS: Type.Boolean({ default: false }),
  WEBHOOK_TIMEOUT_MS: whole(10_000, 1, 600_000),
  WEBHOOK_RETRY_BASE_MS: whole(5_000, 1, 3_600_000),
  WEBHOOK_MAX_ATTEMPTS: whole(57, 1, 1000),
  WEBHOOK_CONCURRENCY: whole(64, 1, 1000),
  // Past this many pending deliveries a subscription is disabled: the outbox stays bounded while a receiver is down.
  WEBHOOK_MAX_PENDING: whole(DEFAULT_MAX_PENDING, 1, 10_000_000),
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  // Each waiting or streaming feed reader holds a connection and a timer, nothing that grows with the data.
  CHANGES_MAX_READERS: whole(1_000, 1, 100_000),
  CHANGES_MAX_READERS_PER_TOKEN: whole(8, 1, 100_000)
})

export type Env = Static<typeof Env>
