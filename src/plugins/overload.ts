import { getHeapStatistics } from 'node:v8'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Overloaded, withHeaders } from '../http/errors.ts'
import { monotonicMs } from '../process/clock.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The 503 to answer while the service is overloaded; undefined while it is not. */
    overloaded: () => Error | undefined
  }
}

const SAMPLE_MS = 1000
const TICK_MS = 10
const RETRY_AFTER_SECONDS = '10'

/**
 * Whether the event loop lags past MAX_EVENT_LOOP_DELAY_MS or the heap nears its limit,
 * sampled once a second; auth refuses API requests while it does. Not @fastify/under-pressure:
 * its timer reads /proc, which throws EMFILE when every file is taken; V8's heap needs no file.
 */
async function overload (app: FastifyInstance): Promise<void> {
  const { MAX_EVENT_LOOP_DELAY_MS: maxEventLoopDelayMs, maxHeapUsedBytes } = app.config
  let overloaded = false
  app.decorate('overloaded', () => overloaded ? withHeaders(new Overloaded(), { 'retry-after': RETRY_AFTER_SECONDS }) : undefined)
  if (maxEventLoopDelayMs <= 0 && maxHeapUsedBytes <= 0) return
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
}

export default fp(overload, { name: 'overload', fastify: '5.x', decorators: { fastify: ['config'] } })
