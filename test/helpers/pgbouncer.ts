/**
 * A throwaway PgBouncer in front of a throwaway cluster (postgres-cluster.ts): its own ini
 * in a temp dir, `pool_mode = transaction` and a small pool, every other setting its
 * default; run as the cluster's user, torn down by whoever started it. Like the cluster
 * it knows nothing of tap, for the bench uses it too.
 */
import { execFile, spawn } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { startOnFreePort } from './free-port.ts'
import type { PostgresServer, Teardowns } from './postgres-cluster.ts'
import { getSetup } from './postgres-setup.ts'

const PGBOUNCER = '/usr/sbin/pgbouncer'
/** The server connections PgBouncer opens per database and user: fewer than the tests' instances × DATABASE_POOL_SIZE. */
export const POOL_SIZE = 4
const STOP_TIMEOUT_MS = 10_000

export interface PgBouncer {
  /** `url` (a database of the cluster) reached through PgBouncer instead. */
  through (url: string): string
  /** Runs a command (PAUSE, RESUME, SHOW POOLS…) on PgBouncer's admin console; resolves with its rows. */
  admin (command: string): Promise<Array<Record<string, unknown>>>
  /** Stops PgBouncer (SIGINT, its safe shutdown); its clients' connections are closed. */
  stop (): Promise<void>
  /** Starts it again on the same port. */
  start (): Promise<void>
}

/** Why PgBouncer tests cannot run here, or undefined when they can. */
export function pgbouncerUnavailable (): string | undefined {
  const found = getSetup()
  if (typeof found === 'string') return found
  try {
    accessSync(PGBOUNCER, constants.X_OK)
    return undefined
  } catch {
    return `${PGBOUNCER} not found: install it (apt-get install -y pgbouncer)`
  }
}

/** Starts PgBouncer in front of `server`; the teardown it registers on `t` stops it and removes its directory. */
export async function startPgBouncer (t: Teardowns, server: PostgresServer): Promise<PgBouncer> {
  const found = getSetup()
  if (typeof found === 'string') throw new Error(`PgBouncer unavailable: ${found}`)
  const { base, postgres } = found
  const cluster = new URL(server.url)
  const user = decodeURIComponent(cluster.username)
  const password = decodeURIComponent(cluster.password)

  const dir = await mkdtemp(join(base, 'plant-store-pgbouncer-'))
  const ini = join(dir, 'pgbouncer.ini')
  const pidFile = join(dir, 'pgbouncer.pid')
  const log = join(dir, 'pgbouncer.log')

  // As the cluster's: a PgBouncer left by a killed test process is stopped, its files removed.
  const watchdog = spawn('sh', ['-c', `
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    pid=$(head -n 1 "$2/pgbouncer.pid" 2>/dev/null)
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    rm -rf "$2"`, 'pgbouncer-watchdog', String(process.pid), dir], { detached: true, stdio: 'ignore' })
  watchdog.unref()

  const pid = async (): Promise<number | undefined> => {
    const text = await readFile(pidFile, 'utf8').catch(() => '')
    const found = Number(text.trim())
    return Number.isInteger(found) && found > 0 ? found : undefined
  }
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  const stop = async (): Promise<void> => {
    const running = await pid()
    if (running === undefined) return
    try { process.kill(running, 'SIGINT') } catch {}
    for (let waited = 0; alive(running) && waited < STOP_TIMEOUT_MS; waited += 50) await sleep(50)
    if (alive(running)) try { process.kill(running, 'SIGKILL') } catch {}
    await rm(pidFile, { force: true })
  }
  t.teardown(async () => {
    try {
      await stop()
    } finally {
      watchdog.kill('SIGKILL')
      await rm(dir, { recursive: true, force: true })
    }
  })

  let port = 0
  const urlFor = (database: string): string => {
    const url = new URL(server.url)
    url.port = String(port)
    url.pathname = `/${database}`
    return url.href
  }
  const start = async (): Promise<void> => {
    const [file, argv] = postgres === undefined ? [PGBOUNCER, ['-d', ini]] : [postgres.runuser, ['-u', 'postgres', '--', PGBOUNCER, '-d', ini]]
    await new Promise<void>((resolve, reject) => {
      execFile(file, argv, { cwd: dir, timeout: 10_000 }, (err, stdout, stderr) => {
        if (err === null) resolve()
        else reject(new Error(`pgbouncer failed to start: ${err.message.trim()}\n${stdout}${stderr}`))
      })
    })
    // The daemon has forked: it listens once its pid file is written and the admin console answers.
    const deadline = Date.now() + 10_000
    for (;;) {
      try {
        await admin('SHOW VERSION')
        return
      } catch (err) {
        if (Date.now() > deadline) {
          const tail = (await readFile(log, 'utf8').catch(() => '')).split('\n').slice(-10).join('\n')
          throw new Error(`pgbouncer did not answer: ${(err as Error).message}\n${tail}`)
        }
      }
      await sleep(50)
    }
  }
  const admin = async (command: string): Promise<Array<Record<string, unknown>>> => {
    const client = new pg.Client({ connectionString: urlFor('pgbouncer'), connectionTimeoutMillis: 2000 })
    client.on('error', () => {})
    try {
      await client.connect()
      return (await client.query(command)).rows
    } finally {
      await client.end().catch(() => {})
    }
  }

  const userlist = join(dir, 'userlist.txt')
  await writeFile(userlist, `"${user}" "${password}"\n`, { mode: 0o600 })
  if (postgres !== undefined) {
    await chown(dir, postgres.uid, postgres.gid)
    await chown(userlist, postgres.uid, postgres.gid)
  }
  // The port is the URLs' as soon as it is tried: the start's probe connects through them.
  await startOnFreePort(async (free) => {
    port = free
    await writeFile(ini, [
      '[databases]',
      `* = host=${cluster.hostname} port=${cluster.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      "unix_socket_dir = ''",
      'auth_type = scram-sha-256',
      `auth_file = ${userlist}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${POOL_SIZE}`,
      `logfile = ${log}`,
      `pidfile = ${pidFile}`,
      ''
    ].join('\n'))
    try {
      await start()
    } catch (err) {
      await stop()
      throw err
    }
  }, async () => /Address already in use/.test(await readFile(log, 'utf8').catch(() => '')))

  return { through: (url) => urlFor(new URL(url).pathname.slice(1)), admin, stop, start }
}
