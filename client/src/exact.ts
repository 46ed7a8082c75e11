import createClient, { type Client, type ClientOptions, type ParseAs } from 'openapi-fetch'
import { parseExact, stringifyExact } from './json.ts'

interface Init { parseAs?: ParseAs }
type Result = Promise<{ data?: unknown, error?: unknown, response: Response }>
type Call = (url: string, init?: Init) => Result

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const

/**
 * An openapi-fetch client whose JSON goes both ways without loss: bodies are written with
 * their bigints exact, and JSON answers read with parseExact. openapi-fetch parses with
 * JSON.parse, so each call asks it for text instead; a call that sets parseAs itself
 * (a stream, a blob) is left as it is. Error bodies have no int64 field: openapi-fetch's
 * JSON.parse reads them. Every operation of the contract is there, typed.
 */
export function exactClient<Paths extends {}> (options: ClientOptions): Client<Paths> {
  const client = createClient<Paths>({ ...options, bodySerializer: stringifyExact })
  const exact = (call: Call): Call => async (url, init) => {
    if (init?.parseAs !== undefined && init.parseAs !== 'json') return await call(url, init)
    const result = await call(url, { ...init, parseAs: 'text' })
    return typeof result.data === 'string' ? { ...result, data: result.data === '' ? undefined : parseExact(result.data) } : result
  }
  const methods = Object.fromEntries(METHODS.map((method) => [method, exact(client[method] as Call)]))
  const request = client.request as (method: string, url: string, init?: Init) => Result
  return {
    ...client,
    ...methods,
    request: async (method: string, url: string, init?: Init) => await exact((url, init) => request(method, url, init))(url, init)
  } as unknown as Client<Paths>
}
