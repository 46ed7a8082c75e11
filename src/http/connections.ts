import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.ts'

/** What the service keeps of one client connection while it is open. */
export interface Connection {
  /** The answer it is due last: Node answers in order, so once that one is written all are. */
  latest: ServerResponse | undefined
  /** Requests on it waiting for the answers before theirs to be written out. */
  waiting: number
  /** Refused by Node's parser, which then reports an error again for every packet that follows. */
  refused: boolean
  /** The log of its latest request, for the line saying why the connection was closed. */
  log: FastifyBaseLogger | undefined
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void

/**
 * The one tracker of client connections: the HTTP server (Fastify's `serverFactory`) records
 * each as it is accepted and its latest answer as each request arrives; Node's refusals,
 * the request gate and closing read them.
 */
export class Connections {
  readonly #open = new Map<Socket, Connection>()
  readonly #config: Config
  readonly #trusted: (address: string, hop: number) => boolean

  constructor (config: Config) {
    this.#config = config
    this.#trusted = proxyAddr.compile(config.trustProxy)
  }

  of (socket: Socket): Connection | undefined {
    return this.#open.get(socket)
  }

  /** Fastify's serverFactory: the HTTP server with the service's deadlines and limits. */
  readonly serverFactory = (handler: Handler): Server => {
    const config = this.#config
    const track: Handler = (request, response) => {
      const connection = this.#open.get(request.socket)
      if (connection !== undefined) connection.latest = response
      handler(request, response)
    }
    // Slow clients cannot hold a connection: request, headers, idle keep-alive and a stalled
    // answer each have a deadline, checked every second. Node answers an HTTP/1.1 request
    // without Host itself (requireHostHeader): a 400 with no body.
    const server = createServer({ headersTimeout: config.HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1000 }, track)
    server.requestTimeout = config.REQUEST_TIMEOUT_MS
    server.keepAliveTimeout = config.KEEP_ALIVE_TIMEOUT_MS
    server.setTimeout(config.SEND_TIMEOUT_MS)
    // A connection is a file: past the cap, Node closes a new one as it accepts it.
    server.maxConnections = config.maxConnections
    // A client that half-closes after its request still wants the answer (RFC 9112, 9.6);
    // without this (undocumented) Node switch, a stored create would go unanswered.
    Object.assign(server, { httpAllowHalfOpen: true })
    // An unknown expectation is ignored, as RFC 9110 allows, rather than a bodiless 417.
    server.on('checkExpectation', track)
    server.on('connection', (socket: Socket) => {
      this.#open.set(socket, { latest: undefined, waiting: 0, refused: false, log: undefined })
      socket.once('close', () => this.#open.delete(socket))
    })
    // Listened to, a timeout no longer closes the connection by itself.
    server.on('timeout', (socket: Socket) => {
      this.#stalled(socket)
      socket.destroy()
    })
    return server
  }

  /** Closing: each connection with no request in flight ends now; the others close after their answer. */
  closeIdle (): void {
    // Ended before destroyed, so that the last answer's bytes still go out.
    for (const [socket, { latest }] of this.#open) {
      if (latest === undefined || latest.writableFinished) socket.end(() => socket.destroy())
      // Told, the client sends its next request elsewhere; kept alive, it would hold the close.
      else if (!latest.headersSent) latest.setHeader('connection', 'close')
    }
  }

  // SEND_TIMEOUT_MS, and keep-alive's deadline: only the first one closes a request in flight.
  #stalled (socket: Socket): void {
    const connection = this.#open.get(socket)
    const answer = connection?.latest
    if (answer === undefined || answer.writableFinished || connection?.log === undefined) return
    const sendTimeoutMs = this.#config.SEND_TIMEOUT_MS
    // The client's address as Fastify's request.ip has it, through TRUST_PROXY's proxies.
    const client = proxyAddr(answer.req, this.#trusted)
    connection.log.info({ client, sendTimeoutMs }, `connection closed: nothing moved on it for ${sendTimeoutMs} ms while a request was handled or answered (a client that does not read its answer?)`)
  }
}
