import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'

// A turn can hold hundreds of requests: its answers leave this many at a time.
const MAX_HELD = 64

interface Waiting {
  reply: FastifyReply
  send: () => void
}

/**
 * Answers ready in one event-loop turn leave together, at its end: on a virtual machine each
 * write wakes a waiting client (docs/performance.md). A fastify-plugin so that the hook holds
 * every answer of the app.
 */
async function answerBatches (app: FastifyInstance): Promise<void> {
  let waiting: Waiting[] = []
  const release = (): void => {
    const ready = waiting
    waiting = []
    for (const { reply, send } of ready) {
      try {
        send()
      } catch (err) {
        // One answer Node refuses to write takes the error path; the others still leave.
        reply.send(err)
      }
    }
  }
  app.addHook('onSend', (_request, reply, payload, done) => {
    // Joins the serializer's string of pieces while they are young, not after a turn in memory.
    if (typeof payload === 'string') Buffer.byteLength(payload)
    if (waiting.length === 0) setImmediate(release)
    waiting.push({ reply, send: done })
    if (waiting.length >= MAX_HELD) release()
  })
}

export default fp(answerBatches, { name: 'answer-batches', fastify: '5.x' })
