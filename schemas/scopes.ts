import { Type, type Static } from '@sinclair/typebox'

/** The token scopes and what each opens; a route needs one (src/plugins/auth.ts), else 403. */
export const SCOPES = {
  'plants:read': 'list and read plants, and follow their changes (GET /plants, GET /plants/{id}, GET /plants/changes)',
  'plants:write': 'create, update and delete plants (POST /plants, PUT /plants/{id}, DELETE /plants/{id})',
  'webhooks:manage': 'everything under /webhooks: subscriptions and their deliveries',
  'metrics:read': 'GET /metrics, unless METRICS_REQUIRE_TOKEN=false opens it'
} as const

export const Scope = Type.Union(Object.keys(SCOPES).map((scope) => Type.Literal(scope as keyof typeof SCOPES)))

export type Scope = Static<typeof Scope>

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[]
