import { existsSync, writeFileSync } from 'node:fs'
import t from 'tap'
import { PostgresStore } from '../../src/store/postgres/store.ts'
import { SqliteStore } from '../../src/store/sqlite/store.ts'
import type { PlantStore } from '../../src/store/store.ts'
import { AUTH, postPlant, testApp } from '../helpers/app.ts'
import { postgresUnavailable, startPostgres } from '../helpers/postgres-cluster.ts'
import { checksums, reported, servedPlants, storeCommand, storeCommandOnTerminal } from '../helpers/store-command.ts'
import { ascending, contentOf, fillStore, outboxOf, plantsToCopy, STORE_CONTEXT } from '../helpers/store-content.ts'

// `npm run store -- copy` in each direction, through the command itself: every plant exact
// over the whole int64 range, every subscription in its state, the pending deliveries under
// their ids; the destination served by the app; a non-empty destination refused.

const PLANTS = 2000

t.test('copies SQLite to PostgreSQL, PostgreSQL to SQLite and SQLite to SQLite exactly; the feed restarts; a full destination is refused', { skip: postgresUnavailable() }, async (t) => {
  const dir = t.testdir()
  const server = await startPostgres(t)
  const postgres = await server.createDatabase('moved')
  const stores: PlantStore[] = []
  t.teardown(async () => { for (const store of stores) await store.close() })
  const sqlite = (name: string): string => `sqlite:${dir}/${name}.db`

  const source = new SqliteStore(`${dir}/source.db`, STORE_CONTEXT)
  const plants = ascending(await fillStore(source, plantsToCopy(PLANTS)))
  t.ok(plants.every(({ name, tag }) => name.isWellFormed() && (tag?.isWellFormed() ?? true)), 'names and tags are well-formed Unicode, as the API takes them')
  await source.close()

  const copies = [
    ['SQLite to PostgreSQL', sqlite('source'), postgres],
    ['SQLite to SQLite', sqlite('source'), sqlite('copy')],
    ['PostgreSQL to SQLite', postgres, sqlite('back')]
  ]
  const reports: string[] = []
  for (const [direction, from, to] of copies) {
    const copy = await storeCommand(['copy', from, to])
    t.equal(copy.code, 0, `${direction}: ${copy.stderr}`)
    t.equal(copy.stderr, '', `${direction}: no progress off a terminal`)
    t.equal(reported(copy.stdout, 'plants:'), plants.length, `${direction}: the count`)
    reports.push(copy.stdout)
  }
  const sums = reports.flatMap(checksums)
  t.equal(sums.length, 6)
  t.equal(new Set(sums).size, 1, 'one checksum, source and destination, in every direction')
  t.match(reports[0], /subscriptions: 3 \(1 disabled\)/)
  t.match(reports[0], /pending deliveries: 12, moved under the same ids/)

  const open = async (url: string): Promise<PlantStore> => {
    const store = url.startsWith('sqlite:') ? new SqliteStore(url.slice('sqlite:'.length), STORE_CONTEXT) : await PostgresStore.open(url, 2, STORE_CONTEXT)
    stores.push(store)
    return store
  }
  const [original, onPostgres, copied, back] = await Promise.all([sqlite('source'), postgres, sqlite('copy'), sqlite('back')].map(open))
  const expected = await contentOf(original)
  t.same((expected as { plants: unknown }).plants, plants, 'the source holds the plants it was given')
  for (const [name, store] of [['PostgreSQL', onPostgres], ['SQLite', copied], ['SQLite, through PostgreSQL', back]] as const) {
    t.same(await contentOf(store), expected, `${name}: the plants, subscriptions (url, events, secret, status) and pending deliveries, exactly`)
  }
  // The copies go on as the source would: the same deliveries due, with the same bodies,
  // the same missed events replayed.
  t.same(await outboxOf(onPostgres), await outboxOf(original), 'SQLite to PostgreSQL: the outbox carries on as on the source')
  t.same(await outboxOf(back), await outboxOf(copied), 'PostgreSQL to SQLite: as SQLite to SQLite')
  for (const store of stores.splice(0)) await store.close()

  await t.test('the app on the destination serves every plant exactly, and answers an old cursor 410, saying the history restarted', async (t) => {
    for (const [i, url] of [postgres, sqlite('back')].entries()) {
      const app = await testApp(t, { DATABASE_URL: url })
      t.same(await servedPlants(app), plants, `${url.split(':')[0]}: every plant, exact`)
      const sourceSeq = reported(reports[i === 0 ? 0 : 2], "the source as of its change feed's seq")
      const restarted = reported(reports[i === 0 ? 0 : 2], 'a new history after seq')
      t.ok(restarted >= sourceSeq + 1e12 && restarted < 2 ** 53, 'the new history starts a large gap past the source\'s, far below 2^53')
      const old = await app.inject({ url: `/plants/changes?after=${sourceSeq}`, headers: AUTH })
      t.equal(old.statusCode, 410)
      t.equal(old.json().message, `the change feed no longer holds the events after cursor ${sourceSeq}: the store was moved or restored: its history ` +
        `restarted after seq ${restarted}, and this cursor is from the earlier history; read the plants again, then follow the feed from its latest`)
      const fresh = await app.inject({ url: '/plants/changes', headers: AUTH })
      t.same(fresh.json(), { changes: [], next: restarted, latest: restarted }, 'the new history is empty, its latest the restart')
      t.equal((await postPlant(app, { id: 42, name: 'after the move' })).statusCode, 200)
      const next = await app.inject({ url: `/plants/changes?after=${restarted}`, headers: AUTH })
      t.equal(next.json().changes[0].seq, restarted + 1, 'the next change follows the restart')
      await app.close()
    }
  })

  await t.test('a destination holding plants is refused, unchanged; --replace replaces it', async (t) => {
    const before = await storeCommand(['copy', sqlite('copy'), sqlite('other')])
    t.equal(before.code, 0)
    const refused = await storeCommand(['copy', postgres, sqlite('copy')])
    t.equal(refused.code, 1)
    t.equal(refused.stdout, '')
    t.match(refused.stderr, `the destination already holds ${plants.length} plants and 3 subscriptions: name an empty store, or pass --replace to delete them`)
    const unchanged = await storeCommand(['copy', sqlite('copy'), sqlite('other'), '--replace'])
    t.same(checksums(unchanged.stdout), checksums(before.stdout), 'the refused copy changed nothing')
    t.equal(reported(unchanged.stdout, 'a new history after seq'), reported(before.stdout, 'a new history after seq') + 1e12,
      'the history restarts past the destination\'s own latest seq, when it is past the source\'s')
    const replaced = await storeCommand(['copy', postgres, sqlite('copy'), '--replace'])
    t.equal(replaced.code, 0, replaced.stderr)
    t.equal(new Set(checksums(replaced.stdout)).size, 1)
    t.equal(reported(replaced.stdout, 'plants:'), plants.length + 1, 'the plant created on PostgreSQL came along')
  })

  await t.test('on a terminal, the copy shows its progress', async (t) => {
    const shown = await storeCommandOnTerminal(['copy', sqlite('source'), sqlite('watched')])
    t.equal(shown.code, 0, shown.stdout)
    const total = plants.length.toLocaleString('en')
    t.match(shown.stdout, `\rplants copied ${total} / ${total} (100%)`)
    t.match(shown.stdout, `\rplants checked ${total} / ${total} (100%)`)
  })

  await t.test('refusals name what is wrong, and create nothing', async (t) => {
    const cases: Array<[string[], RegExp]> = [
      [['copy', sqlite('nothing'), sqlite('new')], /nothing\.db does not exist: there is no store to copy/],
      [['copy', sqlite('source'), sqlite('source')], /the source and the destination are the same store/],
      [['copy', sqlite('source'), 'memory:'], /memory: keeps nothing beyond its process/],
      [['copy', sqlite('source')], /copy takes two DATABASE_URLs/],
      [['copy', 'mysql://x', sqlite('new')], /DATABASE_URL must be sqlite:<path>, postgres:\/\/… or memory:/],
      [['move'], /no command "move"/],
      [['copy', sqlite('source'), sqlite('garbage')], /garbage\.db cannot be copied to: file is not a database/]
    ]
    writeFileSync(`${dir}/garbage.db`, 'not a database, but some text long enough to be read as one'.repeat(100))
    for (const [args, message] of cases) {
      const res = await storeCommand(args)
      t.equal(res.code, 1, args.join(' '))
      t.match(res.stderr, message)
    }
    t.notOk(existsSync(`${dir}/new.db`))
  })
})
