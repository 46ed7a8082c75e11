import { int64Properties } from './schema.ts'

// JSON.rawJSON and the reviver's `context` are in Node 22 and every current browser,
// not yet in TypeScript's lib.
interface ExactJSON {
  rawJSON: (text: string) => unknown
  parse: (text: string, reviver: (key: string, value: unknown, context: { source?: string }) => unknown) => unknown
}
const { rawJSON, parse } = JSON as unknown as ExactJSON

/** Refuses a runtime without them (Node 20): ids beyond 2^53 would be rounded, silently. */
export function assertExactJson (): void {
  let source: string | undefined
  if (typeof rawJSON === 'function') parse('1', (_key, value, context) => { source = context?.source; return value })
  if (source !== '1') throw new Error('the Plant Store client needs JSON.rawJSON and the source text JSON.parse gives a reviver, to keep int64 ids exact: Node 22 or later, or a current browser')
}

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
