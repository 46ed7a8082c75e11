import type { TSchema } from '@sinclair/typebox'
import envSchema from 'env-schema'
import { Env } from '../../schemas/env.ts'
import { ConfigError } from './error.ts'

// Decimal digits only: Ajv's coercion reads "Infinity" and "1e400" as Infinity (which
// passes its bounds), " " as 0 and "0x10" as 16.
const NUMERALS: Record<string, RegExp> = { integer: /^-?\d{1,20}$/, number: /^-?\d{1,20}(\.\d{1,20})?$/ }
const MAX_QUOTED = 100

/**
 * The environment checked against its schema, defaults filled in. An empty variable counts
 * as unset; a refusal names the variable, what it must be and what it was.
 */
export function validated (env: NodeJS.ProcessEnv): Env {
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
