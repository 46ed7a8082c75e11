import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { byPlant, replayProblems, type History, type PlantState } from './event-history.ts'
import { startServer } from './server.ts'

const WRITERS = 16
const PLANTS_PER_WRITER = 4
const ACKED_BEFORE_KILL = 400

/** What the writers did to one plant: its states acknowledged in order, and the change left without an answer. */
interface Plant {
  acked: PlantState[]
  deleted: boolean
  inFlight?: { state: PlantState | undefined }
}

const show = (state: PlantState | undefined): string => state === undefined ? 'no plant' : JSON.stringify(state)

/**
 * kill -9 in the middle of updates and deletes, and a restart on the same store: every
 * change answered is on disk, and the events (the outbox webhooks and the change feed
 * serve, read by `read` straight from the database) are exactly the changes on disk.
 */
export async function killDuringUpdates (t: Test, env: NodeJS.ProcessEnv, read: () => Promise<History>): Promise<void> {
  let server = await startServer(t, env)
  // Subscribed to every event before any write; nothing listens there: the events stay in the outbox.
  const subscribed = await server.request('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/', events: ['plant.created', 'plant.updated', 'plant.deleted'] } })
  t.equal(subscribed.statusCode, 201, 'a webhook subscribed to all three events')

  const plants = new Map<number, Plant>()
  const created = await Promise.all(Array.from({ length: WRITERS * PLANTS_PER_WRITER }, async (_, i) => {
    const id = 1000 + i
    plants.set(id, { acked: [{ name: `created ${id}` }], deleted: false })
    return (await server.request('POST', '/plants', { body: { id, name: `created ${id}` } })).statusCode
  }))
  t.same(created.filter((code) => code !== 200), [], `${created.length} plants created`)

  const answered = { count: 0 }
  const refused: string[] = []
  // Each writer changes its own plants, one request at a time: at most one change per plant is in flight.
  const writers = Array.from({ length: WRITERS }, async (_, writer) => {
    const live = Array.from({ length: PLANTS_PER_WRITER }, (_, k) => 1000 + writer * PLANTS_PER_WRITER + k)
    for (let i = 0; ; i++) {
      const deleting = i % 40 === 39 && live.length > 1
      const id = deleting ? live.shift()! : live[i % live.length]
      const plant = plants.get(id)!
      // A name no other write sends; the tag set, changed and removed in turn.
      const state: PlantState | undefined = deleting ? undefined : i % 3 === 0 ? { name: `w${writer} #${i}` } : { name: `w${writer} #${i}`, tag: `t${i % 2}` }
      plant.inFlight = { state }
      let res
      try {
        res = deleting ? await server.request('DELETE', `/plants/${id}`) : await server.request('PUT', `/plants/${id}`, { body: state })
      } catch {
        return // no answer: the process died
      }
      plant.inFlight = undefined
      if (res.statusCode !== (deleting ? 204 : 200)) refused.push(`${id}: ${res.statusCode} ${res.body}`)
      else if (deleting) plant.deleted = true
      else plant.acked.push(state!)
      answered.count++
    }
  })
  while (answered.count < ACKED_BEFORE_KILL) await sleep(5)
  server.child.kill('SIGKILL')
  await Promise.all(writers)
  t.equal(await server.exited, null, 'killed by a signal')
  t.same(refused, [], 'every change answered before the kill was a success')
  const inFlight = [...plants.values()].filter((plant) => plant.inFlight !== undefined).length
  t.ok(inFlight > 0, `${answered.count} changes answered, ${inFlight} in flight when the process died`)

  server = await startServer(t, env)
  const lost: string[] = []
  for (const [id, plant] of plants) {
    const res = await server.request('GET', `/plants/${id}`)
    const { name, tag } = res.statusCode === 200 ? res.json() : {}
    const stored = res.statusCode === 404 ? 'no plant' : res.statusCode === 200 ? show(tag === undefined ? { name } : { name, tag }) : `${res.statusCode} ${res.body}`
    const allowed = [plant.deleted ? undefined : plant.acked.at(-1), ...plant.inFlight === undefined ? [] : [plant.inFlight.state]].map(show)
    if (!allowed.includes(stored)) lost.push(`${id}: ${stored}, not ${allowed.join(' or ')}`)
  }
  t.same(lost, [], `every plant as last acknowledged, or as the change in flight left it (${plants.size} plants)`)

  const history = await read()
  t.same(replayProblems(history), [], `each plant's ${history.events.length} events replay, in seq order, to what is stored`)
  const missing: string[] = []
  const events = byPlant(history.events)
  for (const [id, plant] of plants) {
    const updates = (events.get(BigInt(id)) ?? []).filter((event) => event.type === 'plant.updated')
    const expected = plant.acked.slice(1).map(show)
    const found = updates.map((event) => event.body === null ? '(erased)' : show(event.body.new))
    // An update in flight may have been stored, and announced, after the last acknowledged one.
    const inFlight = plant.inFlight?.state === undefined ? [] : [show(plant.inFlight.state)]
    const erased = found.every((name) => name === '(erased)')
    const matches = (names: string[]): boolean => erased ? found.length === names.length : names.join('\n') === found.join('\n')
    if (!matches(expected) && !(inFlight.length > 0 && matches([...expected, ...inFlight]))) {
      missing.push(`${id}: events ${found.join(', ')}; acknowledged ${expected.join(', ')}${inFlight.length > 0 ? `, in flight ${inFlight[0]}` : ''}`)
    }
  }
  t.same(missing, [], 'each acknowledged update has its plant.updated event, in order (a deleted plant\'s erased ones counted)')
}
