import { fastifySSE } from '@fastify/sse'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { ChangesQuery, HEARTBEAT_SECONDS, STREAM_SECONDS } from '../../schemas/index.ts'
import { CursorExpired } from '../http/errors.ts'
import { monotonicMs } from '../process/clock.ts'
import type { ChangeQuery, ChangeRead, StoredChange } from '../store/changes.ts'
import type { PlantStore } from '../store/store.ts'
import { ChangeWatch } from './change-watch.ts'
import { ReaderSlots, type ReaderLimits } from './reader-slots.ts'
import { listChanges, PAGE_BYTE_BUDGET } from './route-schemas.ts'

export interface ChangeRoutesOptions {
  store: PlantStore
  limits: ReaderLimits
}

const DEFAULT_LIMIT: number = ChangesQuery.properties.limit.default
// A stream reads the feed in chunks this size: enough to catch up fast, small next to a page's budget.
const STREAM_CHUNK = 100

/** GET /plants/changes: the feed as JSON pages, long polls, or Server-Sent Events. */
const changeRoutes: FastifyPluginAsyncTypebox<ChangeRoutesOptions> = async (app, { store, limits }) => {
  await app.register(fastifySSE, { heartbeatInterval: HEARTBEAT_SECONDS * 1000 })
  const watch = new ChangeWatch(store.changes, app.log)
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

  app.get('/plants/changes', {
    schema: listChanges,
    config: { scope: 'plants:read' },
    // The data is the Change's JSON, written already.
    sse: { kind: 'dual', serializer: (data: unknown) => String(data) }
  }, async (request, reply) => {
    const { after, limit = DEFAULT_LIMIT, wait = 0 } = request.query
    const token = request.token!.name
    if (reply.sse !== undefined) {
      const lastEventId = request.headers['last-event-id']
      const from = typeof lastEventId === 'string' ? Number(lastEventId) : after
      const first = await read({ after: from, limit: STREAM_CHUNK })
      const release = slots.take(token)
      try {
        await stream(reply, first, from)
      } finally {
        release()
      }
      return
    }
    let page = await read({ after, limit })
    if (page.changes.length === 0 && wait > 0) {
      const release = slots.take(token)
      try {
        const signal = endOf(reply)
        const until = monotonicMs() + wait * 1000
        while (page.changes.length === 0 && !signal.aborted && monotonicMs() < until) {
          await watch.next(page.latest, until - monotonicMs(), signal)
          page = await read({ after, limit })
        }
      } finally {
        release()
      }
    }
    return await reply.type('application/json').send(pageJson(page, after))
  })

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
          await sse.send({ id: String(change.seq), event: change.type, data: changeJson(change) })
          cursor = change.seq
        }
        if (signal.aborted || !sse.isConnected || monotonicMs() >= until) return
        if (feed.changes.length < STREAM_CHUNK) await watch.next(feed.latest, until - monotonicMs(), signal)
        if (signal.aborted || !sse.isConnected) return
        feed = await read({ after: cursor, limit: STREAM_CHUNK })
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

/** One event as JSON: its data is the stored body itself, the exact bytes its webhooks get (ids exact). */
function changeJson ({ seq, type, plantId, at, payload }: StoredChange): string {
  const head = `{"seq":${seq},"type":"${type}","at":"${at.toISOString()}","id":${plantId}`
  return payload === null ? `${head},"erased":true}` : `${head},"data":${payload.toString('utf8')}}`
}

/** A page as JSON, cut at about PAGE_BYTE_BUDGET bytes (at least one event); `next` resumes after its last event. */
function pageJson ({ changes, horizon, latest }: ChangeRead, after: number | undefined): string {
  const parts: string[] = []
  let bytes = 0
  let next = after ?? horizon
  for (const change of changes) {
    const json = changeJson(change)
    bytes += json.length
    if (bytes > PAGE_BYTE_BUDGET && parts.length > 0) break
    parts.push(json)
    next = change.seq
  }
  return `{"changes":[${parts.join(',')}],"next":${next},"latest":${latest}}`
}
