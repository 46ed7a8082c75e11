import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, fstatSync, mkdirSync, openSync, readSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { DatabaseConfig } from '../store/open.ts'
import { tokenFault } from './rules.ts'

// A token is 32 characters; anything much longer is not one, and is not read whole.
const MAX_FILE_BYTES = 256

/** A token for a run without API_TOKENS or API_TOKENS_FILE: 24 random bytes, 32 URL-safe characters. */
export function freshToken (): string {
  return randomBytes(24).toString('base64url')
}

/** `<database file>.token` beside a SQLite database; none for memory: or PostgreSQL, whose runs get a fresh token. */
export function devTokenFile (database: DatabaseConfig): string | undefined {
  return database.engine === 'sqlite' && database.path !== ':memory:' ? `${resolve(database.path)}.token` : undefined
}

/** The token of a run without API_TOKENS or API_TOKENS_FILE: kept beside a SQLite database, so it survives restarts. */
export function devToken (database: DatabaseConfig): string {
  const file = devTokenFile(database)
  return file === undefined ? freshToken() : readKept(file) ?? keep(file)
}

function keep (file: string): string {
  const token = freshToken()
  mkdirSync(dirname(file), { recursive: true })
  // wx: never over a token another start has just kept.
  writeFileSync(file, `${token}\n`, { flag: 'wx', mode: 0o600 })
  chmodSync(file, 0o600) // whatever the umask
  return token
}

/** The token in the file; undefined when there is no file. A file others may read, or that holds no token, is refused. */
function readKept (file: string): string | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  const refuse = (why: string) => new Error(`the development token file ${file} ${why}; fix it, or delete it to have a new token made`)
  try {
    const mode = fstatSync(fd).mode & 0o777
    if (mode !== 0o600) throw refuse(`has mode 0${mode.toString(8)}; it must be 0600, readable by its owner only`)
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1)
    const length = readSync(fd, buffer, 0, buffer.length, 0)
    if (length > MAX_FILE_BYTES) throw refuse(`is larger than ${MAX_FILE_BYTES} bytes`)
    const token = buffer.toString('utf8', 0, length).trim()
    if (token === '') throw refuse('is empty')
    const fault = tokenFault(token)
    if (fault !== undefined) throw refuse(`does not hold a valid token: it ${fault}`)
    return token
  } finally {
    closeSync(fd)
  }
}
