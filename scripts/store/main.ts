import { parseArgs } from 'node:util'
import { databaseConfig } from '../../src/config.ts'
import { database } from '../../src/config/values.ts'
import { storeLocation } from '../../src/store/location.ts'
import type { DatabaseConfig } from '../../src/store/open.ts'
import { backup, type FileSummary } from '../../src/store/sqlite/backup.ts'
import { restore } from '../../src/store/sqlite/restore.ts'
import { markRestored } from '../../src/store/transfer-open.ts'
import { copyStore } from './copy.ts'

// `npm run --silent store -- <command> …`: moves, backs up and restores the plant store
// (docs/backup.md). Each command prints what it did on stdout; progress, on a terminal, and
// refusals go to stderr, and a refusal exits 1 having changed nothing.

const USAGE = `usage: npm run --silent store -- <command>
  copy <from DATABASE_URL> <to DATABASE_URL> [--replace]
      copies one snapshot of a store into another (SQLite or PostgreSQL): plants, subscriptions, pending deliveries
  backup <file>
      copies the SQLite store of DATABASE_URL into a new file, while the service runs
  restore <file>
      puts a backup in place of the SQLite store of DATABASE_URL; the service must be stopped
  mark-restored
      restarts the change feed's history of the store of DATABASE_URL, after a restore by other means (pg_restore)`

function fail (message: string, usage = false): never {
  process.stderr.write(`plant-store store: ${message}\n${usage ? `${USAGE}\n` : ''}`)
  process.exit(1)
}

const seconds = (since: number): string => `${((performance.now() - since) / 1000).toFixed(1)} s`

/** What a file holds, in one line. */
const counted = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`
const holds = (file: FileSummary): string =>
  `${counted(file.plants, 'plant', 'plants')}, ${counted(file.subscriptions, 'subscription', 'subscriptions')}, ${counted(file.pendingDeliveries, 'pending delivery', 'pending deliveries')}, ` +
  `change feed up to seq ${file.latest}, schema version ${file.schemaVersion}, ${file.bytes} bytes`

/** The SQLite file of DATABASE_URL; PostgreSQL has its own tools. */
function sqliteFile (store: DatabaseConfig, command: string): string {
  if (store.engine === 'sqlite') return store.path
  throw new Error(`${command} is for a SQLite store, and DATABASE_URL names ${store.engine === 'memory' ? 'memory:' : 'PostgreSQL'}: ` +
    'for PostgreSQL use pg_dump and pg_restore, then mark-restored (docs/backup.md)')
}

async function run (command: string | undefined, args: string[], replace: boolean): Promise<void> {
  const started = performance.now()
  switch (command) {
    case 'copy': {
      if (args.length !== 2) fail('copy takes two DATABASE_URLs: the source, then the destination', true)
      const [from, to] = args.map((url) => database(url, 1))
      const report = await copyStore(from, to, replace)
      process.stdout.write([
        `copied ${storeLocation(from)} to ${storeLocation(to)} in ${seconds(started)}, one snapshot: the source as of its change feed's seq ${report.snapshotSeq}`,
        `plants: ${report.plants.count}, checksum ${report.plants.source} (source), ${report.plants.destination} (destination)`,
        `subscriptions: ${report.subscriptions} (${report.disabled} disabled), with their url, events, secret and status`,
        `pending deliveries: ${report.deliveries}, moved under the same ids (with the ${report.events} events they and the disabled subscriptions need)`,
        `change feed: a new history after seq ${report.restartedThrough}; a cursor of the source answers 410 there`,
        ''
      ].join('\n'))
      return
    }
    case 'backup': {
      if (args.length !== 1) fail('backup takes one argument: the file to write', true)
      const path = sqliteFile(databaseConfig(), 'backup')
      const copy = backup(path, args[0])
      process.stdout.write(`backed up ${path} to ${args[0]} in ${seconds(started)}: ${holds(copy)}; PRAGMA integrity_check: ok\n`)
      return
    }
    case 'restore': {
      if (args.length !== 1) fail('restore takes one argument: the backup file', true)
      const path = sqliteFile(databaseConfig(), 'restore')
      const { restored, replaced, restartedThrough } = restore(args[0], path)
      const before = replaced.state === 'absent'
        ? 'there was no file to replace'
        : replaced.state === 'unreadable'
          ? `the replaced file could not be read (${replaced.reason}): pending deliveries of the backup will be sent again, under the same ids`
          : `the replaced file's history reached seq ${replaced.latest}; ${replaced.delivered} deliveries pending in the backup that it had delivered are marked delivered`
      process.stdout.write(`restored ${args[0]} to ${path} in ${seconds(started)}: ${holds(restored)}\n${before}\n` +
        `change feed: a new history after seq ${restartedThrough}; a cursor from before answers 410\n`)
      return
    }
    case 'mark-restored': {
      if (args.length !== 0) fail('mark-restored takes no argument: it reads DATABASE_URL', true)
      const store = databaseConfig()
      const { latest, restartedThrough } = await markRestored(store)
      process.stdout.write(`${storeLocation(store)}: the change feed's history reached seq ${latest}; a new history after seq ${restartedThrough}; a cursor from before answers 410\n`)
      return
    }
    default:
      fail(command === undefined ? 'name a command' : `no command ${JSON.stringify(command)}`, true)
  }
}

let parsed
try {
  parsed = parseArgs({ allowPositionals: true, options: { replace: { type: 'boolean', default: false } } })
} catch (err) {
  fail((err as Error).message, true)
}
const [command, ...args] = parsed.positionals
if (parsed.values.replace && command !== 'copy') fail('--replace is an option of copy', true)
try {
  await run(command, args, parsed.values.replace)
} catch (err) {
  fail((err as Error).message)
}
