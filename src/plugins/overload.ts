import { getHeapStatistics } from 'node:v8'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Overloaded, withHeaders } from '../http/errors.ts'
import { monotonicMs } from '../monotonic-clock.ts'

export interface OverloadLimits {
  /** The event loop's longest delay in the last sample, in ms, past which requests are refused; 0: no check. */
  maxEventLoopDelayMs: number
  /** The JavaScript heap in use, in bytes, past which requests are refused; 0: no check. */
  maxHeapUsedBytes: number
}

const SAMPLE_MS = 1000
const TICK_MS = 10
const RETRY_AFTER_SECONDS = '10'

/**
 * Refuses requests with a 503 while the process is overloaded: its event loop lagging
 * or its heap near V8's limit, as measured once a second. In place of
 * @fastify/under-pressure, whose sampling timer also reads the resident memory through
 * /proc: with every file taken that read throws EMFILE, from a timer, and it brought the
 * service down (8 webhook subscriptions to a receiver that held its connections did it
 * under a limit of 300 files). The heap is read from V8, which needs no file. A plugin
 * with fastify-plugin because the hook must guard the routes of the scope it is
 * registered in.
 */
async function overload (app: FastifyInstance, limits: OverloadLimits): Promise<void> {
  const { maxEventLoopDelayMs, maxHeapUsedBytes } = limits
  if (maxEventLoopDelayMs <= 0 && maxHeapUsedBytes <= 0) return
  let overloaded = false
  let timer: NodeJS.Timeout | undefined
  // Measured from ready on: compiling the routes' schemas at start holds the loop for
  // a while, and counted as load it refused the first requests, for up to a second,
  // with 503 (an in-process test app on a busy machine did).
  app.addHook('onReady', async () => {
    let sampleStart = monotonicMs()
    let lastTick = sampleStart
    let longestDelayMs = 0
    // The longest delay, not the mean: a request waits out the turn it arrives in, and
    // one stall of 3 s among a second's 10 ms turns averaged 61 ms. Timed here rather
    // than with monitorEventLoopDelay, whose reset drops the delay after it: a stall
    // across the once-a-second reset was never recorded.
    timer = setInterval(() => {
      const now = monotonicMs()
      longestDelayMs = Math.max(longestDelayMs, now - lastTick - TICK_MS)
      lastTick = now
      if (now - sampleStart < SAMPLE_MS) return
      overloaded = (maxEventLoopDelayMs > 0 && longestDelayMs > maxEventLoopDelayMs) ||
        (maxHeapUsedBytes > 0 && getHeapStatistics().used_heap_size > maxHeapUsedBytes)
      sampleStart = now
      longestDelayMs = 0
    }, TICK_MS).unref()
  })
  app.addHook('onClose', async () => {
    clearInterval(timer)
  })
  app.addHook('onRequest', (_request, _reply, done) => {
    if (!overloaded) return done()
    done(withHeaders(new Overloaded(), { 'retry-after': RETRY_AFTER_SECONDS }))
  })
}

export default fp(overload, { name: 'overload', fastify: '5.x' })
