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

// RFC 6750 lets a client send its token in the query; the service refuses it there, but logs the URL.
const TOKEN_PARAMETER = 'access_token='

/** The URL as logged: every access_token parameter's value cut out. */
function loggedUrl (url: string): string {
  let at = url.indexOf(TOKEN_PARAMETER)
  if (at === -1) return url
  let logged = ''
  let from = 0
  while (at !== -1) {
    const value = at + TOKEN_PARAMETER.length
    logged += `${url.slice(from, value)}[redacted]`
    const end = url.indexOf('&', value)
    from = end === -1 ? url.length : end
    at = end === -1 ? -1 : url.indexOf(TOKEN_PARAMETER, end)
  }
  return logged + url.slice(from)
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
