import { randomBytes } from 'node:crypto'
import { existsSync, renameSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import type { TokenEntry } from '../schemas/tokens-file.ts'
import { checkEntries, namedMoment, readEntries } from '../src/tokens/file.ts'
import { hashToken } from '../src/tokens/registry.ts'

// `npm run token -- --name importer --scopes plants:write [--expires 2027-01-01] [--file tokens.json]`:
// prints a new token once on stdout, and its entry for API_TOKENS_FILE on stderr, or
// appends the entry to --file. The token itself is written nowhere else.

const USAGE = 'usage: npm run --silent token -- --name <name> --scopes <scope>[,<scope>…] [--expires <date>] [--file <tokens file>]'
// A date (midnight UTC) or an RFC 3339 date-time.
const EXPIRES = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))?$/

function fail (message: string, usage = true): never {
  process.stderr.write(`plant-store token: ${message}\n${usage ? `${USAGE}\n` : ''}`)
  process.exit(1)
}

function expiry (text: string): string {
  const at = EXPIRES.test(text) ? namedMoment(text) : undefined
  if (at === undefined) fail(`--expires must be a date such as 2027-01-01 or an RFC 3339 date-time; got ${JSON.stringify(text)}`)
  if (at <= Date.now()) fail(`--expires ${text} is not in the future`)
  return new Date(at).toISOString()
}

let options
try {
  options = parseArgs({
    options: { name: { type: 'string' }, scopes: { type: 'string', multiple: true }, expires: { type: 'string' }, file: { type: 'string' } }
  }).values
} catch (err) {
  fail((err as Error).message)
}
const { name, scopes, expires, file } = options
if (name === undefined || scopes === undefined) fail('--name and --scopes are required')

// 32 random bytes: 256 bits, beyond guessing, so a fast hash is enough to keep it.
const token = randomBytes(32).toString('base64url')
const entry: TokenEntry = {
  name,
  sha256: hashToken(token).toString('hex'),
  scopes: scopes.flatMap((list) => list.split(',')).map((scope) => scope.trim()).filter((scope) => scope !== '') as TokenEntry['scopes'],
  ...(expires === undefined ? {} : { expiresAt: expiry(expires) })
}

/** Appends the entry to the file, which it creates if need be; refused as the service would refuse the result. */
function append (file: string, entry: TokenEntry): void {
  const entries = [...(existsSync(file) ? readEntries(file) : []), entry]
  try {
    checkEntries(entries)
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`)
  }
  // Renamed into place, so a reload at any moment reads the old file or the new, never half of one.
  const written = `${file}.${process.pid}.tmp`
  writeFileSync(written, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 })
  renameSync(written, file)
}

try {
  if (file === undefined) {
    checkEntries([entry])
    process.stderr.write(`plant-store token: add this entry to the API_TOKENS_FILE array, then send the service SIGHUP:\n${JSON.stringify(entry)}\n`)
  } else {
    append(file, entry)
    process.stderr.write(`plant-store token: added "${name}" to ${file}; send the service SIGHUP to put it in force\n`)
  }
} catch (err) {
  fail((err as Error).message, false)
}
// Last, once the entry is known to be usable: a token that could not be added is never shown.
process.stdout.write(`${token}\n`)
