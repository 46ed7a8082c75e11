import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/**
 * One line per completed request instead of Fastify's two (incoming + completed):
 * half the logging cost, and what an operator needs in one place. The request's
 * logger already carries its reqId; no headers are logged, so no token either: a
 * request that presented a known token names it (`token`, its name in the tokens file).
 */
export class RequestLog extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      route: request.routeOptions.url,
      url: request.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      token: request.token?.name
    }
    if (error) reply.log.error({ ...line, err: error }, 'request errored')
    else reply.log.info(line, 'request completed')
  }
}
