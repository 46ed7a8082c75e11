/**
 * A throwaway PostgreSQL cluster: initdb in a temp dir, pg_ctl start on a free port with
 * password authentication, torn down (and its files removed) by whoever started it. The
 * PostgreSQL tests start one per test (t.teardown), the bench one per run for its
 * postgres rows; so it lives here, not in test/ or bench/, and knows nothing of tap:
 * scripts/ is compiled by `npm run build` (tsconfig.build.json), where tap is no type.
 * Finding the server's programs, and its user when we are root, is postgres-setup.ts's.
 */
import { execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { appendFile, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { startOnFreePort } from './free-port.ts'
import { getSetup } from './postgres-setup.ts'

/** Where the cluster's clean-up is registered: a tap test's `t`, or the bench's own list. */
export interface Teardowns {
  teardown: (fn: () => Promise<void>) => void
}

export interface PostgresServer {
  /** postgres://user:password@127.0.0.1:<port>/postgres, password authentication over TCP. */
  url: string
  /** Fast shutdown (pg_ctl stop -m fast): clients are disconnected, the data stays. */
  stop (): Promise<void>
  /** Starts the stopped server again on the same port and data. */
  start (): Promise<void>
  /** Creates an empty database (name: letters, digits, _) and returns its URL. */
  createDatabase (name: string): Promise<string>
}

const USER = 'plant'
const START_TIMEOUT_S = 30
const STOP_TIMEOUT_S = 10

/** Why PostgreSQL tests cannot run here (no binaries found), or undefined when they can. */
export function postgresUnavailable (): string | undefined {
  const found = getSetup()
  return typeof found === 'string' ? found : undefined
}

/** Connects and runs SELECT 1, retrying for up to timeoutMs; rejects with the last error. */
async function probe (url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.query('SELECT 1')
      return
    } catch (err) {
      if (Date.now() > deadline) throw err
    } finally {
      await client.end().catch(() => {})
    }
    await sleep(50)
  }
}

/** Starts a throwaway cluster; the teardown it registers on `t` stops it and removes its directory. */
export async function startPostgres (t: Teardowns): Promise<PostgresServer> {
  const found = getSetup()
  if (typeof found === 'string') throw new Error(`PostgreSQL unavailable: ${found}`)
  const { bindir, base, postgres } = found

  const dir = await mkdtemp(join(base, 'plant-store-pg-'))
  const data = join(dir, 'data')
  const log = join(dir, 'server.log')
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PG')))

  // A server left by a test process that was killed (tap's timeout) before its teardown
  // ran: this watchdog stops it (SIGQUIT is an immediate shutdown) and removes its files.
  const watchdog = spawn('sh', ['-c', `
    while kill -0 "$1" 2>/dev/null; do sleep 1; done
    pid=$(head -n 1 "$2/data/postmaster.pid" 2>/dev/null)
    if [ -n "$pid" ]; then kill -QUIT "$pid"; sleep 5; [ -f "$2/data/postmaster.pid" ] && kill -KILL "$pid"; fi 2>/dev/null
    rm -rf "$2"`, 'pg-watchdog', String(process.pid), dir], { detached: true, stdio: 'ignore' })
  watchdog.unref()

  const run = async (bin: string, args: string[], timeoutS: number): Promise<void> => {
    const [file, argv] = postgres === undefined
      ? [join(bindir, bin), args]
      : [postgres.runuser, ['-u', 'postgres', '--', join(bindir, bin), ...args]]
    await new Promise<void>((resolve, reject) => {
      execFile(file, argv, { cwd: dir, env, timeout: timeoutS * 1000, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
        if (err === null) return resolve()
        readFile(log, 'utf8').catch(() => '').then((serverLog) => {
          reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message.trim()}\n${stdout}${stderr}` +
            (serverLog === '' ? '' : `server log (end):\n${serverLog.split('\n').slice(-20).join('\n')}`)))
        }, reject)
      })
    })
  }

  // pg_ctl -t bounds its own wait; the kill after timeoutS + 5 s covers a pg_ctl that hangs.
  const pgCtl = async (args: string[], timeoutS: number): Promise<void> => await run('pg_ctl', ['-D', data, '-s', '-t', String(timeoutS), ...args], timeoutS + 5)

  /** The postmaster's pid while its pid file exists. */
  const postmasterPid = async (): Promise<number | undefined> => {
    const pidFile = await readFile(join(data, 'postmaster.pid'), 'utf8').catch(() => '')
    const pid = Number(pidFile.split('\n')[0])
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  }

  t.teardown(async () => {
    try {
      if (await postmasterPid() !== undefined) await pgCtl(['stop', '-m', 'immediate'], STOP_TIMEOUT_S)
    } catch {
      // pg_ctl failed or hung: signal the postmaster ourselves (unless the pid file is stale and
      // its pid someone else's). SIGQUIT is an immediate shutdown, which also frees the shared
      // memory; SIGKILL would leak it. Backends exit by themselves once the postmaster is gone.
      const pid = await postmasterPid()
      if (pid !== undefined && (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => data)).includes(data)) {
        try { process.kill(pid, 'SIGQUIT') } catch {}
        for (let i = 0; i < 50 && await postmasterPid() !== undefined; i++) await sleep(100)
        if (await postmasterPid() !== undefined) {
          try { process.kill(pid, 'SIGKILL') } catch {}
        }
      }
    } finally {
      watchdog.kill('SIGKILL')
      await rm(dir, { recursive: true, force: true })
    }
  })

  if (postgres !== undefined) await chown(dir, postgres.uid, postgres.gid)
  const password = randomBytes(16).toString('hex')
  const pwfile = join(dir, 'pwfile')
  await writeFile(pwfile, password + '\n', { mode: 0o600 })
  if (postgres !== undefined) await chown(pwfile, postgres.uid, postgres.gid)
  await run('initdb', ['-D', data, '-U', USER, `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=trust',
    '-E', 'UTF8', '--locale=C'], 60)
  await rm(pwfile)

  let port = 0
  const urlFor = (database: string): string => `postgres://${USER}:${password}@127.0.0.1:${port}/${database}`
  const start = async (): Promise<void> => {
    await pgCtl(['start', '-w', '-l', log], START_TIMEOUT_S)
    await probe(urlFor('postgres'), 5000)
  }

  // The port is the URLs' as soon as it is tried: the start's probe connects through them.
  await startOnFreePort(async (free) => {
    port = free
    await appendFile(join(data, 'postgresql.conf'), [
      '',
      '# test/helpers/postgres-cluster.ts',
      "listen_addresses = '127.0.0.1'",
      `port = ${port}`,
      `unix_socket_directories = '${dir.replaceAll("'", "''")}'`,
      ''
    ].join('\n'))
    await start()
  }, async () => {
    if (!/could not bind|could not create any TCP\/IP sockets/.test(await readFile(log, 'utf8').catch(() => ''))) return false
    await writeFile(log, '')
    return true
  })

  return {
    url: urlFor('postgres'),
    stop: async () => await pgCtl(['stop', '-w', '-m', 'fast'], STOP_TIMEOUT_S),
    start,
    async createDatabase (name: string): Promise<string> {
      if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain database name: ${name}`)
      const client = new pg.Client({ connectionString: urlFor('postgres') })
      client.on('error', () => {})
      try {
        await client.connect()
        await client.query(`CREATE DATABASE "${name}"`)
      } finally {
        await client.end().catch(() => {})
      }
      return urlFor(name)
    }
  }
}
