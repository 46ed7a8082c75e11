/**
 * Where the throwaway PostgreSQL cluster's programs are and as whom they run: the server's
 * bindir, runuser and the postgres user when we are root, and a temp base short enough for
 * its unix socket. Found once per process; like postgres-cluster.ts, it knows nothing of tap.
 */
import { execFileSync } from 'node:child_process'
import { accessSync, constants, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'

// A unix socket path ("<dir>/.s.PGSQL.<port>") must fit in sockaddr_un's 108 bytes.
const MAX_SOCKET_DIR = 80

export interface Setup {
  bindir: string
  /** Set when we are root: PostgreSQL refuses to run as root, so its programs run as this user. */
  postgres?: { runuser: string, uid: number, gid: number }
  /** Where the temp directories go: somewhere the server's user can reach. */
  base: string
}

let setup: Setup | string | undefined

function executable (path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

const isServerBindir = (dir: string): boolean => ['initdb', 'pg_ctl', 'postgres'].every((bin) => executable(join(dir, bin)))

function quiet (file: string, args: string[]): string | undefined {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim()
  } catch {
    return undefined
  }
}

/**
 * pg_config --bindir first; but Debian's pg_config may be libpq-dev's, of another
 * major version than the server, so a directory counts only if it holds the server's
 * programs. Then the newest /usr/lib/postgresql/N/bin, then PATH.
 */
function findBindir (): string | undefined {
  const candidates: string[] = []
  const configured = quiet('pg_config', ['--bindir'])
  if (configured !== undefined) candidates.push(configured)
  try {
    candidates.push(...readdirSync('/usr/lib/postgresql')
      .filter((version) => /^\d+(\.\d+)?$/.test(version))
      .sort((a, b) => Number(b) - Number(a))
      .map((version) => join('/usr/lib/postgresql', version, 'bin')))
  } catch {}
  candidates.push(...(process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== ''))
  return candidates.find(isServerBindir)
}

function findSetup (): Setup | string {
  if (process.platform === 'win32') return 'the PostgreSQL test harness needs a POSIX system'
  const bindir = findBindir()
  if (bindir === undefined) {
    return 'PostgreSQL server programs (initdb, pg_ctl, postgres) not found: install them (apt-get install -y postgresql) or put pg_config on PATH'
  }
  let base = tmpdir()
  if (join(base, 'plant-store-pg-XXXXXX').length > MAX_SOCKET_DIR) base = '/tmp'
  if (process.getuid?.() !== 0) return { bindir, base }
  const runuser = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find(executable)
  if (runuser === undefined) return 'running as root, PostgreSQL must run as the postgres user, but runuser was not found'
  const uid = quiet('id', ['-u', 'postgres'])
  const gid = quiet('id', ['-g', 'postgres'])
  if (uid === undefined || gid === undefined) return 'running as root, PostgreSQL must run as another user, but there is no postgres user'
  if (quiet(runuser, ['-u', 'postgres', '--', 'test', '-x', base]) === undefined) {
    if (quiet(runuser, ['-u', 'postgres', '--', 'test', '-x', '/tmp']) === undefined) {
      return `the postgres user cannot reach ${base} or /tmp`
    }
    base = '/tmp'
  }
  return { bindir, base, postgres: { runuser, uid: Number(uid), gid: Number(gid) } }
}

export function getSetup (): Setup | string {
  setup ??= findSetup()
  return setup
}
