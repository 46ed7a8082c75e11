import { ERROR_CODES, type ErrorCode } from '../../schemas/error.ts'

/**
 * What is wrong with an error answer, held against the Error shape: `application/json`,
 * exactly `{ error: <the status>, message, code (one of that status), details? }`, details
 * a list of `{ field, message }`. Undefined when nothing is. `body` undefined: an answer
 * that has none (to a HEAD), whose type alone is checked.
 */
export function errorShapeProblem (status: number, contentType: string, body: string | undefined): string | undefined {
  if (!/^application\/json\s*(;|$)/.test(contentType)) return `an error with content type ${JSON.stringify(contentType)}`
  if (body === undefined) return undefined
  let error: unknown
  try {
    error = JSON.parse(body)
  } catch {
    return 'an error whose body is not JSON'
  }
  if (error === null || typeof error !== 'object' || Array.isArray(error)) return 'an error whose body is not a JSON object'
  const keys = Object.keys(error).sort().join(',')
  if (keys !== 'code,error,message' && keys !== 'code,details,error,message') {
    return `an error with the keys ${keys}, not error, message, code and maybe details`
  }
  const { error: stated, message, code, details } = error as Record<string, unknown>
  if (stated !== status) return `error is ${JSON.stringify(stated)}, not the status`
  if (typeof message !== 'string') return 'message is not a string'
  if (!Object.hasOwn(ERROR_CODES, String(code)) || ERROR_CODES[code as ErrorCode].status !== status) {
    return `code ${JSON.stringify(code)} is not one of status ${status}`
  }
  if (details !== undefined && (!Array.isArray(details) || details.length === 0 || details.some((d) =>
    typeof d?.field !== 'string' || typeof d?.message !== 'string' || Object.keys(d).length !== 2))) {
    return 'details that are not a list of { field, message }'
  }
  return undefined
}
