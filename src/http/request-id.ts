import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import proxyAddr from '@fastify/proxy-addr'

const ACCEPTABLE = /^[\w.:-]{1,128}$/

/** A fresh UUID, or a trusted proxy's X-Request-Id; ignored from others, who must not forge log ids. */
export function requestIdGenerator (trustProxy: string[]): (req: IncomingMessage) => string {
  const trusted = proxyAddr.compile(trustProxy)
  return (req) => {
    const given = req.headers['x-request-id']
    if (typeof given === 'string' && ACCEPTABLE.test(given) && trusted(req.socket.remoteAddress ?? '', 0)) return given
    return randomUUID()
  }
}
