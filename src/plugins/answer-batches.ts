import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'

// A turn can hold hundreds of requests (one per client with a thousand of them): its
// answers leave this many at a time, so none waits for a whole turn's work.
const MAX_HELD = 64

interface Waiting {
  reply: FastifyReply
  send: () => void
}

/**
 * Answers leave once per event-loop turn, together, rather than each as soon as it is
 * ready. Writing an answer to a socket whose client is waiting for it wakes that
 * client, and on a virtual machine a wake-up is dear: answered one by one, with the
 * work of a request between them, reads woke a client about once per request and ran
 * at half the speed they run at now, written back to back (see the README's
 * Performance). The wait is at most one turn of the loop, or the work of MAX_HELD
 * requests when a turn holds more. Creates left together already, after their shared
 * commit.
 * A plugin with fastify-plugin so that the hook holds every answer of the app.
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
        // Writing one answer failed (a header Node refuses, say): it takes the error
        // path, as Fastify does it, and the others of the turn still leave.
        reply.send(err)
      }
    }
  }
  app.addHook('onSend', (_request, reply, payload, done) => {
    // The serializer's answer is a string of pieces (a page of 100: over a thousand)
    // that V8 joins only when it is first read whole. Its UTF-8 length, read now as
    // Fastify reads it again for Content-Length, joins it while its pieces are young.
    // Held unjoined until the turn ended, every waiting answer's pieces lived through
    // the young generation's collections: pages of 100 spent about a fifth of their
    // CPU collecting garbage (README, Performance).
    if (typeof payload === 'string') Buffer.byteLength(payload)
    if (waiting.length === 0) setImmediate(release)
    waiting.push({ reply, send: done })
    if (waiting.length >= MAX_HELD) release()
  })
}

export default fp(answerBatches, { name: 'answer-batches', fastify: '5.x' })
