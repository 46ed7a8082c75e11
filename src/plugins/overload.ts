import { getHeapStatistics } from 'node:v8'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Overloaded, withHeaders } from '../http/errors.ts'
import { monotonicMs } from '../process/clock.ts'

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
 * Refuses requests with a 503 while the event loop lags or the heap nears its limit,
 * sampled once a second. Not @fastify/under-pressure: its timer reads /proc, which throws
 * EMFILE when every file is taken and brought the service down; V8's heap needs no file.
 */
async function overload (app: FastifyInstance, limits: OverloadLimits): Promise<void> {
  const { maxEventLoopDelayMs, maxHeapUsedBytes } = limits
  if (maxEventLoopDelayMs <= 0 && maxHeapUsedBytes <= 0) return
  let overloaded = false
  let timer: NodeJS.Timeout | undefined
  // From ready on: compiling the schemas at start holds the loop, and would refuse the first requests.
  app.addHook('onReady', async () => {
    let sampleStart = monotonicMs()
    let lastTick = sampleStart
    let longestDelayMs = 0
    // The longest delay, not the mean (a request waits out its whole turn); not
    // monitorEventLoopDelay, whose reset loses a stall that spans it.
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
