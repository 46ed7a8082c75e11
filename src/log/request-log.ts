import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route machines call over and over (health, metrics, docs): successes at debug, failures at info. */
    quietLog?: boolean
  }
}

/**
 * One line per completed request instead of Fastify's two: what an operator needs in one
 * place. No headers, so no token: a known token is named (`token`, its name in the tokens file).
 */
export class RequestLog extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions // a getter that builds an object: read once
    const line = requestLine(request, reply, route.url)
    if (error) reply.log.error({ ...line, err: error }, 'request errored')
    else if (reply.statusCode < 400 && route.config.quietLog === true) reply.log.debug(line, 'request completed')
    else reply.log.info(line, 'request completed')
  }
}

// RFC 6750's query parameter for a token: refused by the service, but the URL is logged.
const TOKEN_PARAMETER = 'access_token'
const PERCENT_ESCAPE = /%([0-9a-f]{2})/gi

/** The URL as logged: the value of every parameter a decoding, case-insensitive reader takes for access_token, cut out. */
export function loggedUrl (url: string): string {
  const query = url.indexOf('?')
  if (query === -1) return url
  const pairs = url.slice(query + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=')
    const name = equals === -1 ? pair : pair.slice(0, equals)
    return equals !== -1 && decoded(name).toLowerCase() === TOKEN_PARAMETER ? `${name}=[redacted]` : pair
  })
  return `${url.slice(0, query + 1)}${pairs.join('&')}`
}

// Only %XX escapes (and +) are decoded: a malformed escape stays as it is, where decodeURIComponent throws.
function decoded (name: string): string {
  return name.replaceAll('+', ' ').replace(PERCENT_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
}

/** What a request's line says of it; a new fact about requests is one more field here. */
function requestLine (request: FastifyRequest, reply: FastifyReply, route: string | undefined) {
  return {
    method: request.method,
    route,
    url: loggedUrl(request.url),
    status: reply.statusCode,
    ms: Math.round(reply.elapsedTime * 100) / 100,
    // The client's address, through TRUST_PROXY's proxies.
    client: request.ip,
    token: request.token?.name,
    // Why a 4xx or 5xx: the Error's code (absent for the rare error answered outside the error handler).
    code: reply.errorCode ?? undefined
  }
}
