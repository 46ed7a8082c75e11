import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { postgresHistory, replayProblems, type PlantState } from '../helpers/event-history.ts'
import { postgresRoutes } from '../helpers/postgres-routes.ts'
import { startServer } from '../helpers/server.ts'

// Two instances on one PostgreSQL, 16 writers creating and updating plants over both: the
// events, in seq order (the order webhooks and the change feed serve them), hold every
// acknowledged change exactly once, and each plant's agree with its own history; a feed
// reader following both instances as they write sees each of them once, in that order.

const WRITERS = 16
const WRITE_MS = 3000
// Plants every writer updates, through either instance: their updates race across instances.
const SHARED = [1, 2, 3, 4, 5, 6, 7, 8]
// A loaded machine writes less in WRITE_MS: the writers go on (for at most MAX_WRITE_MS) until
// the shared plants have had more updates than this, so that their races are many.
const SHARED_UPDATES = 8 * SHARED.length
const MAX_WRITE_MS = 30_000

/** An acknowledged change: which plant, and the state it wrote. */
interface Change { id: number, state: PlantState }

for (const route of postgresRoutes(t)) {
  t.test(`two instances on one PostgreSQL ${route.name}, 16 writers creating and updating: every change one event, each plant's in its own order`, { skip: route.skip }, async (t) => {
    const database = await route.reach()
    const url = await database.createDatabase('feed_order')
    // Two services, PostgreSQL and this test share few CPUs: the overload guard's 503s are not what this tests.
    const env = { API_TOKENS: TOKEN, DATABASE_URL: url, MAX_EVENT_LOOP_DELAY_MS: '0' }
    const servers = await Promise.all([1, 2].map(async () => await startServer(t, env)))
    // A feed reader following both instances in turn while the writers write, a page at a time.
    const read: Array<{ seq: number, type: string, id: string }> = []
    let writing = true
    const reader = (async () => {
      for (let cursor = 0, turn = 0; ; turn++) {
        const res = await servers[turn % 2].request('GET', `/plants/changes?after=${cursor}&limit=50&wait=1`)
        t.equal(res.statusCode, 200)
        // Ids kept as the text they are: past 2^53 a double would not tell them apart.
        const changes = JSON.parse(res.body.replace(/"id":(-?\d+)/g, '"id":"$1"')).changes as Array<{ seq: number, type: string, id: string }>
        read.push(...changes.map(({ seq, type, id }) => ({ seq, type, id })))
        cursor = changes.at(-1)?.seq ?? cursor
        if (!writing && changes.length === 0) return
      }
    })()

    const created: Change[] = []
    const updated: Change[] = []
    const refused: string[] = []
    let sharedUpdates = 0
    const write = async (server: number, method: 'POST' | 'PUT', id: number, state: PlantState): Promise<void> => {
      const res = method === 'POST'
        ? await servers[server].request('POST', '/plants', { body: { id, ...state } })
        : await servers[server].request('PUT', `/plants/${id}`, { body: state })
      if (res.statusCode !== 200) {
        refused.push(`${method} ${id}: ${res.statusCode} ${res.body}`)
        return
      }
      ;(method === 'POST' ? created : updated).push({ id, state })
      if (method === 'PUT' && SHARED.includes(id)) sharedUpdates++
    }
    await Promise.all(SHARED.map(async (id) => await write(id % 2, 'POST', id, { name: `shared ${id}` })))

    const started = Date.now()
    const writes = (): boolean => Date.now() - started < WRITE_MS || (sharedUpdates <= SHARED_UPDATES && Date.now() - started < MAX_WRITE_MS)
    await Promise.all(Array.from({ length: WRITERS }, async (_, writer) => {
      const own: number[] = []
      for (let i = 0; writes(); i++) {
        // Each request on the other instance than the last; a name no other write sends.
        const server = (writer + i) % 2
        const state = i % 3 === 0 ? { name: `w${writer} #${i}` } : { name: `w${writer} #${i}`, tag: `t${i % 2}` }
        if (i % 4 === 0 || own.length === 0) {
          const id = 1000 * (writer + 1) + own.length
          own.push(id)
          await write(server, 'POST', id, state)
        } else {
          await write(server, 'PUT', i % 4 === 1 ? own[i % own.length] : SHARED[(writer + i) % SHARED.length], state)
        }
      }
    }))
    t.same(refused, [], `${created.length} creates and ${updated.length} updates, each answered 200`)
    writing = false
    await reader

    // What the feed serves: the events in seq order.
    const history = await postgresHistory(database.direct(url))
    const { events } = history
    t.same(replayProblems(history), [], `each plant's events (${events.length} in all, ${history.plants.size} plants) replay in seq order to what is stored`)

    const key = (type: string, id: unknown, state: PlantState): string => `${type} ${id} ${JSON.stringify(state)}`
    const stateOf = ({ name, tag }: PlantState): PlantState => tag === undefined ? { name } : { name, tag }
    const found = new Map<string, number>()
    for (const event of events) {
      const { body } = event
      const k = body === null ? `${event.type} ${event.plantId} erased` : key(event.type, event.plantId, stateOf(event.type === 'plant.updated' ? body.new : body))
      found.set(k, (found.get(k) ?? 0) + 1)
    }
    const expected = [...created.map(({ id, state }) => key('plant.created', id, state)), ...updated.map(({ id, state }) => key('plant.updated', id, state))]
    t.same(expected.filter((k) => found.get(k) !== 1).map((k) => `${k}: ${found.get(k) ?? 0} events`), [], 'each acknowledged change has exactly one event')
    t.equal(events.length, expected.length, 'and no other event')

    t.same(read.map(({ seq, type, id }) => `${seq} ${type} ${id}`), events.map(({ seq, type, plantId }) => `${seq} ${type} ${plantId}`),
      `the reader, following the feed over both instances as they wrote, saw every event once, in seq order (${read.length})`)

    // Each shared plant's updates came through both instances, racing: its order held all the same.
    t.ok(sharedUpdates > SHARED_UPDATES, `${sharedUpdates} updates of the ${SHARED.length} shared plants`)
  })
}
