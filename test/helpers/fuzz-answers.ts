import type { LightMyRequestResponse } from 'fastify'
import type { FuzzRequest } from './fuzz-requests.ts'

// Reading the service's answers in the HTTP fuzz test's properties, and reporting a
// violation with the answer that shows it.

class Violation extends Error {}

export function violated (res: LightMyRequestResponse, why: string): never {
  const body = res.body.length > 300 ? `${res.body.slice(0, 300)}… (${res.body.length} characters)` : res.body
  throw new Violation(`${why}; the answer: ${res.statusCode} ${body}`)
}

/** The answer's body as JSON, or undefined when it is not JSON. */
export function jsonOf (res: LightMyRequestResponse): unknown {
  try {
    return JSON.parse(res.body)
  } catch {
    return undefined
  }
}

export function messageOf (res: LightMyRequestResponse): unknown {
  return (jsonOf(res) as { message?: unknown } | null | undefined)?.message
}

export function hasBody (req: FuzzRequest, res: LightMyRequestResponse): boolean {
  return req.method !== 'HEAD' && res.statusCode !== 204 && res.statusCode !== 304
}
