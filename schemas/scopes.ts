import { Type, type Static } from '@sinclair/typebox'

/**
 * What a bearer token may be allowed to do, each scope with the operations it opens.
 * A route behind the token declares the one scope it needs (src/plugins/auth.ts); a
 * token granted other scopes only is answered 403.
 */
export const SCOPES = {
  'plants:read': 'list and read plants (GET /plants, GET /plants/{id})',
  'plants:write': 'create and delete plants (POST /plants, DELETE /plants/{id})',
  'webhooks:manage': 'everything under /webhooks: subscriptions and their deliveries',
  'metrics:read': 'GET /metrics, when METRICS_REQUIRE_TOKEN=true'
} as const

export const Scope = Type.Union(Object.keys(SCOPES).map((scope) => Type.Literal(scope as keyof typeof SCOPES)))

export type Scope = Static<typeof Scope>

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[]
