/**
 * A store's events (the outbox table webhook_events, what webhooks and the change feed
 * serve) read straight from the database, and checked against the plants stored: each
 * plant's events, in seq order, must replay to what is stored.
 */
import Database from 'better-sqlite3'
import pg from 'pg'

/** A plant's name and tag, as an event carries them; undefined: no plant. */
export interface PlantState { name: string, tag?: string }

/** An event row; its payload parsed, null once its plant's deletion erased it. */
export interface EventRow { seq: bigint, plantId: bigint, type: string, body: Record<string, any> | null }

export interface History {
  /** Every event, in seq order. */
  events: EventRow[]
  plants: Map<bigint, PlantState>
}

const EVENTS = 'SELECT seq, plant_id, type, payload FROM webhook_events ORDER BY seq'
const PLANTS = 'SELECT id, name, tag FROM plants'

/** The history in a SQLite file, read in one snapshot (readonly: beside a running service). */
export function sqliteHistory (path: string): History {
  const db = new Database(path, { readonly: true })
  try {
    db.defaultSafeIntegers(true)
    return db.transaction(() => history(
      db.prepare<[], { seq: bigint, plant_id: bigint, type: string, payload: Buffer | null }>(EVENTS).all(),
      db.prepare<[], { id: bigint, name: string | Buffer, tag: string | Buffer | null }>(PLANTS).all()))()
  } finally {
    db.close()
  }
}

/** The history in a PostgreSQL database, read in one snapshot. */
export async function postgresHistory (url: string): Promise<History> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
    const events = (await client.query(EVENTS)).rows
    const plants = (await client.query(PLANTS)).rows
    await client.query('COMMIT')
    return history(events, plants)
  } finally {
    await client.end()
  }
}

type Text = string | Buffer | null

function history (events: Array<{ seq: unknown, plant_id: unknown, type: string, payload: Buffer | null }>,
  plants: Array<{ id: unknown, name: Text, tag: Text }>): History {
  const text = (value: Text): string | undefined => value === null ? undefined : value.toString('utf8')
  return {
    events: events.map((row) => ({
      seq: BigInt(row.seq as string),
      plantId: BigInt(row.plant_id as string),
      type: row.type,
      body: row.payload === null ? null : JSON.parse(row.payload.toString('utf8'))
    })),
    plants: new Map(plants.map((row) => [BigInt(row.id as string), stateOf({ name: text(row.name)!, tag: text(row.tag) })]))
  }
}

/** Events by plant, each plant's in seq order. */
export function byPlant (events: EventRow[]): Map<bigint, EventRow[]> {
  const plants = new Map<bigint, EventRow[]>()
  for (const event of events) plants.set(event.plantId, [...plants.get(event.plantId) ?? [], event])
  return plants
}

const stateOf = ({ name, tag }: { name: string, tag?: string }): PlantState => tag === undefined ? { name } : { name, tag }
const same = (a: PlantState | undefined, b: PlantState | undefined): boolean => JSON.stringify(a) === JSON.stringify(b)
const show = (state: PlantState | undefined): string => state === undefined ? 'no plant' : JSON.stringify(state)

/**
 * What is wrong with each plant's history, one line per plant: created first, each update's
 * `old` the state before it, a deletion naming what it deleted, and the last state what is
 * stored (a plant deleted last: none stored). A payload erased by its plant's deletion is
 * unknown and matches anything. Every stored plant must have events.
 */
export function replayProblems ({ events, plants }: History): string[] {
  const problems: string[] = []
  const histories = byPlant(events)
  for (const [id, history] of histories) {
    // null: a state whose payload was erased.
    let state: PlantState | null | undefined
    const wrong = (event: EventRow, why: string): void => { problems.push(`plant ${id}, event ${event.seq} (${event.type}): ${why}`) }
    for (const event of history) {
      const { body } = event
      if (body !== null && String(body.id) !== String(id)) wrong(event, `its body names plant ${body.id}`)
      if (event.type === 'plant.created') {
        if (state !== undefined) wrong(event, `created while ${show(state ?? undefined)} existed`)
        state = body === null ? null : stateOf(body as PlantState)
      } else if (event.type === 'plant.updated') {
        if (state === undefined) wrong(event, 'updated with no plant')
        if (body !== null && state !== null && !same(stateOf(body.old), state)) wrong(event, `old ${show(stateOf(body.old))}, not ${show(state)}`)
        state = body === null ? null : stateOf(body.new)
      } else if (event.type === 'plant.deleted') {
        if (state === undefined) wrong(event, 'deleted with no plant')
        if (body !== null && state !== null && !same(stateOf(body as PlantState), state)) wrong(event, `names ${show(stateOf(body as PlantState))}, not ${show(state)}`)
        state = undefined
      } else {
        wrong(event, 'an unknown type')
      }
    }
    const stored = plants.get(id)
    if (state === null) problems.push(`plant ${id}: stored as ${show(stored)}, its last event's payload erased`)
    else if (!same(state, stored)) problems.push(`plant ${id}: its events end at ${show(state)}, stored is ${show(stored)}`)
  }
  for (const [id, stored] of plants) {
    if (!histories.has(id)) problems.push(`plant ${id}: stored as ${show(stored)} with no event`)
  }
  return problems
}
