import { randomUUID } from 'node:crypto'
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { finished } from 'node:stream'
import type { ErrorCode } from '../../schemas/error.ts'
import { apiSecurityHeaders } from './answer-headers.ts'
import { errorBody } from './error-handler.ts'

// Each connection's latest answer: Node answers in order, so once it is written all are.
const latest = new WeakMap<Socket, ServerResponse>()

/** For the server's 'request' event: remembers the answer each connection is due last. */
export function trackLatestAnswer (request: IncomingMessage, response: ServerResponse): void {
  latest.set(request.socket, response)
}

// Connections being refused: the parser reports its error again for every packet that follows.
const refusing = new WeakSet<Socket>()

// The headers every answer carries (the request id is fresh: there was no request).
const HEADERS = Object.entries(apiSecurityHeaders).map(([name, value]) => `${name}: ${value}\r\n`).join('')

/**
 * Requests Node refuses before Fastify (slow or large headers, not HTTP) get the Error
 * shape, then a close; whole requests before them are answered first, as each may have written.
 */
export function clientErrorHandler (err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || refusing.has(socket)) return
  refusing.add(socket)
  const [code, message]: [ErrorCode, string] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? ['request_timeout', 'the request did not arrive within the time limit']
    : err.code === 'HPE_HEADER_OVERFLOW'
      ? ['headers_too_large', 'the request headers are larger than the limit']
      : ['invalid_request', 'the request is not valid HTTP']
  afterAnswers(socket, (free) => {
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

/** Calls then once the answers before the refused bytes are written; free is false when one is half-written. */
function afterAnswers (socket: Socket, then: (free: boolean) => void): void {
  const last = latest.get(socket)
  if (last === undefined || last.writableFinished) return then(true)
  // Queued behind an answer still being written.
  if (last.socket === null) {
    last.once('socket', () => afterAnswers(socket, then))
    return
  }
  if (last.req.complete) {
    finished(last, () => then(true))
    return
  }
  // The request still arriving (one too slow, say) is the one refused: nothing waits for it.
  then(!last.headersSent)
}
