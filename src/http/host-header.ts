import type { FastifyReply, FastifyRequest } from 'fastify'
import { HostInvalid, HostMissing } from './errors.ts'

// RFC 3986's host (a name, an IPv4 address, or an IP literal in brackets) and an optional
// port; empty is allowed, for a target with no authority (RFC 9112, 3.2). No user
// information, no second value. Tested only on values no longer than a host can be.
const HOST = /^(?:\[[0-9A-Za-z:.\-_~!$&'()*+,;=]+\]|[0-9A-Za-z\-._~!$&'()*+,;=%]*)(?::\d*)?$/
const MAX_HOST_LENGTH = 1000

/**
 * An HTTP/1.1 request without a Host header, with two, or with one that names no host is
 * answered 400 (RFC 9112, 3.2). Node refuses a missing one itself unless told not to
 * (`requireHostHeader`), with no body at all; it takes the others, keeping the first of two.
 * Checked here, each is an Error like every other 400.
 */
export function requireHost (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const { headers, httpVersionMajor, httpVersionMinor } = request.raw
  const host = headers.host
  if (host === undefined) {
    done(httpVersionMajor === 1 && httpVersionMinor === 1 ? new HostMissing() : undefined)
    return
  }
  done(host.length <= MAX_HOST_LENGTH && HOST.test(host) && !twoHosts(request.raw.rawHeaders) ? undefined : new HostInvalid())
}

function twoHosts (raw: string[]): boolean {
  let seen = false
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue
    if (seen) return true
    seen = true
  }
  return false
}
