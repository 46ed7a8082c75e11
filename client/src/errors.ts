import type { components } from './schema.ts'

/** The body of every error answer, as the contract has it. */
export type ErrorBody = components['schemas']['Error']
/** The stable causes: branch on these, never on the message. */
export type ErrorCode = ErrorBody['code']

/**
 * An answer that is not a success. `code` is the contract's cause; it is null when the
 * answer had no Error body (a proxy's page, a 400 Node gave without one): `body` keeps it.
 */
export class PlantStoreError extends Error {
  readonly status: number
  readonly code: ErrorCode | null
  readonly details: ErrorBody['details']
  readonly body: unknown
  readonly response: Response

  constructor (response: Response, body: unknown) {
    const error = isErrorBody(body) ? body : undefined
    super(error?.message ?? `${response.status} ${response.statusText}`.trim())
    this.name = 'PlantStoreError'
    this.status = response.status
    this.code = error?.code ?? null
    this.details = error?.details
    this.body = body
    this.response = response
  }
}

function isErrorBody (body: unknown): body is ErrorBody {
  return typeof body === 'object' && body !== null && typeof (body as ErrorBody).code === 'string' && typeof (body as ErrorBody).message === 'string'
}

/** The data of an openapi-fetch result, or its error thrown as a PlantStoreError. */
export function orThrow<T> (result: { data?: T, error?: unknown, response: Response }): T {
  if (!result.response.ok) throw new PlantStoreError(result.response, result.error)
  return result.data as T
}
