import { once } from 'node:events'
import { fastifySSE } from '@fastify/sse'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { ChangesQuery, HEARTBEAT_SECONDS, STREAM_SECONDS } from '../../schemas/index.ts'
import { CursorExpired, InvalidParameter, withDetails } from '../http/errors.ts'
import { monotonicMs } from '../process/clock.ts'
import type { ChangeQuery, ChangeRead } from '../store/changes.ts'
import type { PlantStore } from '../store/store.ts'
import { eventFrame, pageBody } from './change-pages.ts'
import { ChangeWatch } from './change-watch.ts'
import type { PageTurns } from './page-turns.ts'
import { ReaderSlots, type ReaderLimits } from './reader-slots.ts'
import { listChanges, PAGE_BYTE_BUDGET } from './route-schemas.ts'

export interface ChangeRoutesOptions {
  store: PlantStore
  limits: ReaderLimits
  /** The turns plant pages take: feed pages and stream chunks take them too. */
  turns: PageTurns
}

const DEFAULT_LIMIT: number = ChangesQuery.properties.limit.default
// A stream reads the feed in chunks this size: enough to catch up fast, small next to a page's budget.
const STREAM_CHUNK = 100
const STREAM_CHUNK_BYTES = 256 * 1024
const JSON_TYPE = 'application/json; charset=utf-8'

/** A page as sent: its body, and whether it held no event. */
interface Page { body: Buffer, empty: boolean, latest: number }

/** GET /plants/changes: the feed as JSON pages, long polls, or Server-Sent Events. */
const changeRoutes: FastifyPluginAsyncTypebox<ChangeRoutesOptions> = async (app, { store, limits, turns }) => {
  await app.register(fastifySSE, { heartbeatInterval: HEARTBEAT_SECONDS * 1000 })
  const watch = new ChangeWatch(store.changes, store.commits, app.log)
  const slots = new ReaderSlots(limits)
  // Waits and streams end when the app closes: their readers resume on another instance.
  const closing = new AbortController()
  app.addHook('preClose', async () => closing.abort())

  /** The feed after `after`; a cursor the feed no longer covers is a 410. */
  async function read (query: ChangeQuery): Promise<ChangeRead> {
    const feed = await watch.read(query)
    const { after } = query
    if (after !== undefined && after < feed.restarted) {
      throw new CursorExpired(after, `the store was moved or restored: its history restarted after seq ${feed.restarted}, and this cursor is from the earlier history`)
    }
    if (after !== undefined && after < feed.horizon) throw new CursorExpired(after, `its events up to ${feed.horizon} were pruned`)
    if (after !== undefined && after > feed.latest) throw new CursorExpired(after, `no event of this store reached it (the latest is ${feed.latest})`)
    return feed
  }

  /** A page, read and built in its turn of the event loop, cut at PAGE_BYTE_BUDGET bytes. */
  async function page (after: number | undefined, limit: number): Promise<Page> {
    return await turns.take(async () => {
      const feed = await read({ after, limit, bytes: PAGE_BYTE_BUDGET })
      const body = pageBody(feed, after, PAGE_BYTE_BUDGET)
      return { page: { body, empty: feed.changes.length === 0, latest: feed.latest }, bytes: body.length }
    })
  }

  app.get('/plants/changes', {
    schema: listChanges,
    config: { scope: 'plants:read' },
    sse: { kind: 'dual' }
  }, async (request, reply) => {
    const { after, limit = DEFAULT_LIMIT, wait = 0 } = request.query
    const token = request.token!.name
    // A HEAD is answered at once, as its GET would begin: it neither waits nor streams.
    const head = request.method === 'HEAD'
    if (reply.sse !== undefined) {
      const from = streamStart(request.headers['last-event-id'], after)
      const first = await chunk(from)
      if (head) {
        reply.sse.sendHeaders()
        return
      }
      const release = slots.take(token)
      try {
        await stream(reply, first, from)
      } finally {
        release()
      }
      return
    }
    let answer = await page(after, limit)
    if (answer.empty && wait > 0 && !head) {
      const release = slots.take(token)
      try {
        const signal = endOf(reply)
        const until = monotonicMs() + wait * 1000
        while (answer.empty && !signal.aborted && monotonicMs() < until) {
          await watch.next(answer.latest, until - monotonicMs(), signal)
          answer = await page(after, limit)
        }
      } finally {
        release()
      }
    }
    // The page is its JSON's bytes already: sent as they are, never serialized.
    return await reply.type(JSON_TYPE).send(answer.body as unknown as string)
  })

  /** The next chunk of a stream, read in its turn. */
  async function chunk (after: number | undefined): Promise<ChangeRead> {
    return await turns.take(async () => {
      const feed = await read({ after, limit: STREAM_CHUNK, bytes: STREAM_CHUNK_BYTES })
      return { page: feed, bytes: feed.changes.reduce((bytes, change) => bytes + (change.payload?.length ?? 0), 0) }
    })
  }

  /** Sends the events from `first` on, then each as it commits, until the stream's time is up, the client goes or the app closes. */
  async function stream (reply: FastifyReply, first: ChangeRead, from: number | undefined): Promise<void> {
    const sse = reply.sse!
    // A stream's reader never half-closes: the end of its side is the reader gone (the
    // server keeps half-closed connections for the answers they still want).
    const signal = endOf(reply, true)
    const until = monotonicMs() + STREAM_SECONDS * 1000
    sse.sendHeaders()
    let feed = first
    let cursor = from ?? feed.horizon
    try {
      for (;;) {
        for (const change of feed.changes) {
          // Written here, not by sse.send: its wait for `drain` never ends once the reader has gone (fastify/sse#54).
          if (!reply.raw.write(eventFrame(change)) && !await drained(reply, signal)) return
          cursor = change.seq
        }
        if (signal.aborted || !sse.isConnected || monotonicMs() >= until) return
        // Caught up: nothing more until the next commit.
        if (cursor >= feed.latest) await watch.next(feed.latest, until - monotonicMs(), signal)
        if (signal.aborted || !sse.isConnected) return
        feed = await chunk(cursor)
      }
    } catch (err) {
      // Headers are sent: the stream ends, and the client resumes from its last event. A
      // client gone is no news.
      if (sse.isConnected) reply.log.warn({ err, cursor }, 'change feed: a stream ended early (the store failed?); its client resumes from Last-Event-ID')
    }
  }

  /** Aborted when the app closes or the client goes (or, for a stream, half-closes). */
  function endOf (reply: FastifyReply, halfClosed = false): AbortSignal {
    const gone = new AbortController()
    const abort = (): void => gone.abort()
    reply.raw.once('close', abort)
    const socket = reply.raw.socket
    if (halfClosed && socket !== null) {
      socket.once('end', abort)
      // The connection may serve another request once this answer ends.
      reply.raw.once('close', () => socket.off('end', abort))
    }
    return AbortSignal.any([closing.signal, gone.signal])
  }
}

export default changeRoutes

/** Whether the reader took what was written; false once it went instead, or the app closes (a closed connection never drains). */
async function drained (reply: FastifyReply, signal: AbortSignal): Promise<boolean> {
  try {
    await once(reply.raw, 'drain', { signal })
    return true
  } catch {
    return false
  }
}

/** Where a stream starts: after `Last-Event-ID` when sent (as `after` is bounded, up to 2^53 - 1), else after `after`. */
function streamStart (lastEventId: string | undefined, after: number | undefined): number | undefined {
  if (lastEventId === undefined) return after
  const from = Number(lastEventId)
  if (from > Number.MAX_SAFE_INTEGER) {
    const message = `must be <= ${Number.MAX_SAFE_INTEGER}`
    throw withDetails(new InvalidParameter(`headers/last-event-id ${message}`), [{ field: 'headers/last-event-id', message }])
  }
  return from
}
