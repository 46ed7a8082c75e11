import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { NotReady, ShuttingDown } from '../http/errors.ts'

declare module 'fastify' {
  interface FastifyInstance {
    readiness: Readiness
  }
}

/** How long a readiness check may take before it counts as failed. */
export const READY_TIMEOUT_MS = 1000

/** The checks readiness runs: each plugin that owns something that can fail adds its own. */
export class Readiness {
  readonly #checks = new Map<string, () => Promise<void>>()
  #stopping = false

  /** A check rejects, or takes longer than READY_TIMEOUT_MS, when `name` cannot serve. */
  add (name: string, check: () => Promise<void>): void {
    this.#checks.set(name, check)
  }

  /** From now on the service is not ready: it is shutting down, and takes no new clients. */
  stop (): void {
    this.#stopping = true
  }

  /**
   * Resolves when every check answers in time; otherwise throws NotReady naming only the
   * check: the cause (a driver's message, a host name) goes to `log`, for the operator,
   * not to whoever asked. Once stopped, throws ShuttingDown.
   */
  async check (log: FastifyBaseLogger): Promise<void> {
    if (this.#stopping) throw new ShuttingDown()
    for (const [name, check] of this.#checks) {
      try {
        await withTimeout(check(), READY_TIMEOUT_MS)
      } catch (err) {
        log.warn({ err, check: name }, 'not ready')
        throw new NotReady(`the ${name} is unavailable`)
      }
    }
  }
}

async function withTimeout (work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  try {
    await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Gives the app its `readiness`, for plugins registered later to add their checks to. */
async function readiness (app: FastifyInstance): Promise<void> {
  app.decorate('readiness', new Readiness())
}

export default fp(readiness, { name: 'readiness', fastify: '5.x' })
