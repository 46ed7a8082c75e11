import t from 'tap'
import { PlantRejected, StoreBusy, StoreUnavailable } from '../src/store/errors.ts'
import { GroupCommit, MAX_BATCH_BYTES } from '../src/store/group-commit.ts'
import { createBatch } from '../src/store/postgres/batches.ts'
import type { Query } from '../src/store/postgres/pool.ts'

const MiB = 1024 * 1024

/** A group commit of named items whose size is given, recording every write. */
function recorder (options: { maxBatch?: number, maxQueueBytes?: number, refuse?: (item: string) => Error | undefined, waiting?: { bytes: number } } = {}) {
  const writes: string[][] = []
  const sizes = new Map<string, number>()
  const commit = new GroupCommit<string, string>({
    write: (items) => {
      writes.push(items)
      for (const item of items) {
        const error = options.refuse?.(item)
        if (error !== undefined) throw error
      }
      return items.map((item) => `${item} written`)
    },
    sizeOf: (item) => sizes.get(item) ?? 100,
    maxBatch: options.maxBatch ?? 512,
    maxQueueBytes: options.maxQueueBytes ?? 64 * MiB,
    waiting: options.waiting
  })
  const submit = async (item: string, bytes?: number) => {
    if (bytes !== undefined) sizes.set(item, bytes)
    return await commit.submit(item)
  }
  return { commit, writes, submit }
}

t.test('a batch holds at most maxBatch items and MAX_BATCH_BYTES; an item larger than that is a batch alone', async (t) => {
  t.equal(MAX_BATCH_BYTES, 4 * MiB)
  const { writes, submit } = recorder({ maxBatch: 3 })
  await Promise.all(['a', 'b', 'c', 'd', 'e'].map(async (item) => await submit(item)))
  t.same(writes, [['a', 'b', 'c'], ['d', 'e']], 'three at a time')

  writes.length = 0
  await Promise.all([submit('x', 10), submit('big1', 1.5 * MiB), submit('big2', 1.5 * MiB), submit('big3', 1.5 * MiB), submit('huge', 5 * MiB), submit('y', 10)])
  t.same(writes, [['x', 'big1', 'big2'], ['big3'], ['huge'], ['y']], 'at most 4 MiB at a time, but never nothing')
})

t.test('a full queue refuses at once with StoreBusy; bytes are released as items are answered', async (t) => {
  const { commit, submit } = recorder({ maxQueueBytes: 1000 })
  const first = submit('first', 600)
  await t.rejects(submit('second', 600), StoreBusy, 'past the limit: refused, nothing queued')
  const third = submit('third', 400)
  t.same(await Promise.all([first, third]), ['first written', 'third written'])
  t.equal(await submit('fourth', 1000), 'fourth written', 'the queue is empty again')
  t.equal(await submit('larger than the limit', 5000), 'larger than the limit written', 'taken when nothing waits')
  await commit.drain()
})

t.test('queues sharing their waiting bytes are bounded together (the PostgreSQL creates and updates)', async (t) => {
  const waiting = { bytes: 0 }
  const creates = recorder({ maxQueueBytes: 1000, waiting })
  const updates = recorder({ maxQueueBytes: 1000, waiting })
  const first = creates.submit('create', 600)
  await t.rejects(updates.submit('update', 600), StoreBusy, 'the other queue holds 600 of the 1000 bytes')
  t.equal(await first, 'create written')
  t.equal(await updates.submit('update', 600), 'update written', 'released once answered')
  t.equal(waiting.bytes, 0)
})

t.test('a refused item is isolated: the batch is split until it stands alone, the others are written', async (t) => {
  const poison = new PlantRejected({ cause: new Error('no') })
  const { writes, submit } = recorder({ refuse: (item) => item === 'poison' ? poison : undefined })
  const items = ['a', 'b', 'c', 'poison', 'd', 'e', 'f']
  const results = await Promise.allSettled(items.map(async (item) => await submit(item)))
  t.same(results.map((r) => r.status === 'fulfilled' ? r.value : r.reason), ['a written', 'b written', 'c written', poison, 'd written', 'e written', 'f written'])
  t.same(writes[0], items, 'all in one batch first')
  t.same(writes.filter((batch) => !batch.includes('poison')).flat().sort(), ['a', 'b', 'c', 'd', 'e', 'f'], 'each other item written once')
  t.ok(writes.length <= 2 * Math.ceil(Math.log2(items.length)) + 1, `${writes.length} writes: two per halving`)

  const bug = new Error('a bug')
  const buggy = recorder({ refuse: (item) => item === 'bug' ? bug : undefined })
  const answers = await Promise.allSettled(['x', 'bug'].map(async (item) => await buggy.submit(item)))
  t.same(answers.map((r) => r.status === 'fulfilled' ? r.value : r.reason), ['x written', bug], 'any other error is isolated the same way, as it is')
})

t.test('StoreUnavailable, or StoreBusy (a store too busy to take the batch), fails the whole batch at once, without splitting it', async (t) => {
  for (const error of [new StoreUnavailable(), new StoreBusy()]) {
    const { writes, submit } = recorder({ refuse: () => error })
    const results = await Promise.allSettled(['a', 'b', 'c'].map(async (item) => await submit(item)))
    t.same(results.map((r) => r.status === 'rejected' && r.reason), [error, error, error], error.name)
    // Split, a batch of PostgreSQL creates waited 2 s for a pooled connection at every write of its halves.
    t.same(writes.flat().sort(), ['a', 'b', 'c'], `${error.name}: each written once`)
  }
})

t.test('PostgreSQL batch: a statement failing after the INSERT committed answers its plants alone, never fails the batch', async (t) => {
  // The INSERT creates 1 and skips 2 and 3, there already; 3 was deleted before the read,
  // and inserting it again is refused.
  const refusal = Object.assign(new Error('value too long'), { code: '54000' })
  const statements: string[] = []
  const query = (async (text: string) => {
    statements.push(text.trim().split(/\s/)[0]) // WITH: the insert of plants and their deliveries
    if (statements.length === 1) return { rows: [{ id: '1' }] }
    if (statements.length === 2) return { rows: [{ id: '2', name: Buffer.from('two'), tag: null }] }
    throw refusal
  }) as Query
  const plants = [{ id: 1n, name: 'one' }, { id: 2n, name: 'two' }, { id: 3n, name: 'three' }, { id: 1n, name: 'one again' }]
  const results = await createBatch(query, plants)
  t.same(statements, ['WITH', 'SELECT', 'WITH'])
  t.same(results.slice(0, 2), [{ outcome: 'created', plant: plants[0] }, { outcome: 'unchanged', plant: { id: 2n, name: 'two' } }])
  t.type(results[2], PlantRejected, 'the refused plant answers on its own')
  t.equal((results[2] as Error).cause, refusal)
  t.same(results[3], { outcome: 'conflict', plant: plants[0] })

  const down = new StoreUnavailable()
  const failing = (async () => { throw down }) as Query
  await t.rejects(createBatch(failing, plants), down, 'an outage fails the whole batch')
})
