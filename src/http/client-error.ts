import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { finished } from 'node:stream'
import type { ErrorCode } from '../../schemas/error.ts'
import { apiSecurityHeaders } from './answer-headers.ts'
import type { Connection, Connections } from './connections.ts'
import { errorBody } from './error-handler.ts'

// The headers every answer carries (the request id is fresh: there was no request), written
// as they are here since Node's refusals reach no Fastify reply.
const HEADERS = Object.entries(apiSecurityHeaders).map(([name, value]) => `${name}: ${value}\r\n`).join('')

/**
 * Requests Node refuses before Fastify (slow or large headers, not HTTP) get the Error
 * shape, then a close; whole requests before them are answered first, as each may have written.
 */
export function clientErrorHandler (connections: Connections) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    const connection = connections.of(socket) ?? { latest: undefined, waiting: 0, refused: false, log: undefined }
    if (err.code === 'ECONNRESET' || socket.destroyed || connection.refused) return
    connection.refused = true
    const [code, message]: [ErrorCode, string] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ['request_timeout', 'the request did not arrive within the time limit']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? ['headers_too_large', 'the request headers are larger than the limit']
        : ['invalid_request', 'the request is not valid HTTP']
    afterAnswers(connection, (free) => {
      if (free && socket.writable) {
        const answer = errorBody(code, message)
        const body = JSON.stringify(answer)
        const status = answer.error
        socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${HEADERS}x-request-id: ${randomUUID()}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
      }
      socket.destroy()
    })
  }
}

/** Calls then once the answers before the refused bytes are written; free is false when one is half-written. */
function afterAnswers (connection: Connection, then: (free: boolean) => void): void {
  const last = connection.latest
  if (last === undefined || last.writableFinished) return then(true)
  // Queued behind an answer still being written.
  if (last.socket === null) {
    last.once('socket', () => afterAnswers(connection, then))
    return
  }
  if (last.req.complete) {
    finished(last, () => then(true))
    return
  }
  // The request still arriving (one too slow, say) is the one refused: nothing waits for it.
  then(!last.headersSent)
}
