import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import proxyAddr from '@fastify/proxy-addr'

const ACCEPTABLE = /^[\w.:-]{1,128}$/

/**
 * A fresh UUID for every request, or the X-Request-Id a trusted proxy passed on, so
 * one id follows a request through the proxy's logs and ours. From anyone else the
 * header is ignored: a client must not be able to forge ids in our logs.
 */
export function requestIdGenerator (trustProxy: string[]): (req: IncomingMessage) => string {
  const trusted = proxyAddr.compile(trustProxy)
  return (req) => {
    const given = req.headers['x-request-id']
    if (typeof given === 'string' && ACCEPTABLE.test(given) && trusted(req.socket.remoteAddress ?? '', 0)) return given
    return randomUUID()
  }
}
