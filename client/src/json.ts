import { int64Properties } from './schema.ts'

// JSON.rawJSON and the reviver's `context` are in Node 22 and every current browser,
// not yet in TypeScript's lib.
interface ExactJSON {
  rawJSON: (text: string) => unknown
  parse: (text: string, reviver: (key: string, value: unknown, context: { source?: string }) => unknown) => unknown
}
const { rawJSON, parse } = JSON as unknown as ExactJSON

/** JSON text with every bigint written as the exact integer it is. */
export function stringifyExact (value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => typeof item === 'bigint' ? rawJSON(item.toString()) : item)
}

/**
 * JSON.parse that reads every property the contract types as int64 from its source text,
 * as a bigint: a double would round 9223372036854775807 to 9223372036854775808.
 */
export function parseExact (text: string): unknown {
  return parse(text, (key, value, { source }) =>
    typeof value === 'number' && source !== undefined && int64Properties.has(key) ? BigInt(source) : value)
}
