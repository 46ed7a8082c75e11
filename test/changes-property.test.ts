import fc from 'fast-check'
import t from 'tap'
import { AUTH, testApp } from './helpers/app.ts'
import { fuzzSettings, propertyHolds } from './helpers/fuzz.ts'

// For any sequence of creates, updates and deletes, concurrent or not, and any page size:
// following the change feed from any cursor visits each event once, in ascending seq, and
// replaying every event from the start rebuilds exactly the plants the store holds.

const { seed, numRuns } = fuzzSettings(25)

const ID = fc.integer({ min: 1, max: 4 })
const NAME = fc.string({ minLength: 1, maxLength: 6 })
const operation = fc.oneof(
  fc.record({ op: fc.constant('create' as const), id: ID, name: NAME }),
  fc.record({ op: fc.constant('update' as const), id: ID, name: NAME, tag: fc.option(NAME, { nil: undefined }) }),
  fc.record({ op: fc.constant('delete' as const), id: ID })
)

type State = Map<string, { name: string, tag?: string }>

t.test('the feed, followed from any cursor with any page size, replays to the store', async (t) => {
  const app = await testApp(t)
  let round = 0
  await propertyHolds(t, fc.asyncProperty(fc.array(fc.array(operation, { minLength: 1, maxLength: 4 }), { maxLength: 8 }),
    fc.integer({ min: 1, max: 7 }), fc.nat(), async (bursts, limit, start) => {
      // Ids of a round of their own: the store is shared by the runs.
      const base = 10 * ++round
      const { latest: from } = (await app.inject({ url: '/plants/changes?limit=1', headers: AUTH })).json()
      for (const burst of bursts) {
        await Promise.all(burst.map(async (step) => {
          const url = `/plants${step.op === 'create' ? '' : `/${base + step.id}`}`
          if (step.op === 'create') await app.inject({ method: 'POST', url, headers: AUTH, payload: { id: base + step.id, name: step.name } })
          else if (step.op === 'update') await app.inject({ method: 'PUT', url, headers: AUTH, payload: { name: step.name, tag: step.tag } })
          else await app.inject({ method: 'DELETE', url, headers: AUTH })
        }))
      }
      const events: Array<{ seq: number, type: string, id: number, data?: any }> = []
      for (let cursor = from; ;) {
        const page = (await app.inject({ url: `/plants/changes?after=${cursor}&limit=${limit}`, headers: AUTH })).json()
        events.push(...page.changes)
        if (page.changes.length < limit) break
        cursor = page.next
      }
      if (events.some((e, i) => i > 0 && e.seq <= events[i - 1].seq)) throw new Error('seqs not ascending, or an event twice')
      // From a cursor within the run: the same events after it.
      const cut = events.length === 0 ? from : events[start % events.length].seq
      const after = (await app.inject({ url: `/plants/changes?after=${cut}&limit=1000`, headers: AUTH })).json().changes
      if (JSON.stringify(after) !== JSON.stringify(events.filter((e) => e.seq > cut))) throw new Error(`from cursor ${cut}, other events`)
      // Replayed: the plants of the round as stored. A deleted plant's earlier events are erased, and its deletion follows.
      const replayed: State = new Map()
      for (const { type, id, data } of events) {
        if (type === 'plant.deleted') replayed.delete(String(id))
        else if (data !== undefined) replayed.set(String(id), type === 'plant.created' ? { name: data.name, tag: data.tag } : data.new)
      }
      for (let id = base + 1; id <= base + 4; id++) {
        const res = await app.inject({ url: `/plants/${id}`, headers: AUTH })
        const stored = res.statusCode === 200 ? JSON.stringify({ name: res.json().name, tag: res.json().tag }) : undefined
        const expected = replayed.has(String(id)) ? JSON.stringify({ name: replayed.get(String(id))!.name, tag: replayed.get(String(id))!.tag }) : undefined
        if (stored !== expected) throw new Error(`plant ${id}: stored ${stored}, the feed replays to ${expected}`)
      }
    }), seed, numRuns)
})
