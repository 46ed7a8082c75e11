import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs'
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType } from '@sinclair/typebox/errors'
import { MAX_TOKENS, TokenEntry, TokensFile } from '../../schemas/tokens-file.ts'
import type { Token } from './registry.ts'

// An entry takes about 200 bytes: MAX_TOKENS of them, generously spaced, fit. The file is
// read on the event loop, so a larger one is refused unread.
const MAX_FILE_BYTES = 1024 * 1024

/** Tokens that cannot be used: the message names the entry by number and name, and the file when one was read. */
export class TokensFileError extends Error {}

const checker = TypeCompiler.Compile(TokensFile)
const fields: Record<string, TSchema> = TokenEntry.properties

/** API_TOKENS_FILE as the tokens it grants. Synchronous: read at start and on SIGHUP only, and bounded. */
export function loadTokensFile (file: string): Token[] {
  return readEntries(file).map(({ name, sha256, scopes, expiresAt }) => ({
    name,
    hash: Buffer.from(sha256, 'hex'),
    scopes: new Set(scopes),
    expiresAt: expiresAt === undefined ? undefined : new Date(expiresAt)
  }))
}

/** Why others may read the file (it holds only hashes, which still name every token and scope), or undefined. */
export function readableByOthers (file: string): string | undefined {
  let mode
  try {
    mode = statSync(file).mode & 0o777
  } catch {
    return undefined // gone since it was read: the next reload says so
  }
  return (mode & 0o044) === 0 ? undefined : `${file} has mode 0${mode.toString(8)}: others may read it; chmod 600`
}

/** The file's entries, read and checked; a refusal names the file first. */
export function readEntries (file: string): TokenEntry[] {
  let text: string
  try {
    text = readBounded(file)
  } catch (err) {
    throw err instanceof TokensFileError ? err : new TokensFileError(`${file} cannot be read: ${(err as Error).message}`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new TokensFileError(`${file} is not JSON: ${(err as Error).message}`)
  }
  try {
    return checkEntries(value)
  } catch (err) {
    throw new TokensFileError(`${file}: ${(err as Error).message}`)
  }
}

/**
 * The file's text, if it is a regular file of at most MAX_FILE_BYTES. Opened without
 * waiting (O_NONBLOCK): a named pipe would hold the event loop, and /dev/zero never ends.
 */
function readBounded (file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new TokensFileError(`${file} is not a regular file: a tokens file is read again on SIGHUP, which a pipe or a device cannot be`)
    // Whoever may write the file may grant themselves any scope.
    if ((stat.mode & 0o022) !== 0) throw new TokensFileError(`${file} has mode 0${(stat.mode & 0o777).toString(8)}: others may write it and grant themselves any scope; chmod go-w (0600 is best)`)
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1)
    let length = 0
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null)
      length += read
      if (read === 0 || length === buffer.length) break
    }
    if (length > MAX_FILE_BYTES) throw new TokensFileError(`${file} is larger than ${MAX_FILE_BYTES} bytes: a tokens file holds at most ${MAX_TOKENS} entries`)
    return buffer.toString('utf8', 0, length)
  } finally {
    closeSync(fd)
  }
}

/**
 * The entries, checked against the schema, at most MAX_TOKENS (each request compares its
 * token with every one), with real moments and no name or hash twice.
 */
export function checkEntries (value: unknown): TokenEntry[] {
  if (Array.isArray(value) && value.length > MAX_TOKENS) throw new TokensFileError(`holds ${value.length} entries, more than ${MAX_TOKENS}`)
  const error = checker.Errors(value).First()
  if (error !== undefined) {
    const [, index, field] = error.path.split('/')
    if (index === undefined) throw new TokensFileError('must be a JSON array of token entries')
    throw refusal(value, Number(index), problem(field, error.type))
  }
  const entries = value as TokenEntry[]
  const names = new Map<string, number>()
  const hashes = new Map<string, number>()
  entries.forEach(({ name, sha256, expiresAt }, i) => {
    if (expiresAt !== undefined && namedMoment(expiresAt) === undefined) throw refusal(entries, i, problem('expiresAt'))
    const sameName = names.get(name)
    if (sameName !== undefined) throw refusal(entries, i, `the name is already that of entry ${sameName + 1}`)
    const sameHash = hashes.get(sha256.toLowerCase())
    if (sameHash !== undefined) throw refusal(entries, i, `the sha256 is already that of entry ${sameHash + 1} ("${entries[sameHash].name}")`)
    names.set(name, i)
    hashes.set(sha256.toLowerCase(), i)
  })
  return entries
}

function problem (field: string | undefined, type?: ValueErrorType): string {
  if (field === undefined) return `must be an object with the fields ${Object.keys(fields).join(', ')} (expiresAt optional)`
  if (type === ValueErrorType.ObjectAdditionalProperties) return `${JSON.stringify(field.slice(0, 64))} is not a field of an entry (${Object.keys(fields).join(', ')})`
  const rule = fields[field].description as string
  return type === ValueErrorType.ObjectRequiredProperty ? `${field} is missing: it must be ${rule}` : `${field} must be ${rule}`
}

function refusal (entries: unknown, index: number, message: string): TokensFileError {
  const name = (entries as Array<{ name?: unknown }>)[index]?.name
  const named = typeof name === 'string' ? ` (${JSON.stringify(name.slice(0, 64))})` : ''
  return new TokensFileError(`entry ${index + 1}${named}: ${message}`)
}

/**
 * The moment a date or an RFC 3339 date-time names, in milliseconds; undefined for none.
 * Date.parse reads 2027-02-30 as March 2nd: a token would outlive its expiry by days.
 */
export function namedMoment (text: string): number | undefined {
  const parts = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2}))?/.exec(text)
  const at = Date.parse(text)
  if (parts === null || Number.isNaN(at)) return undefined
  const [year, month, day, hour = 0, minute = 0, second = 0] = parts.slice(1).map((part) => part === undefined ? undefined : Number(part))
  const read = new Date(Date.UTC(year!, month! - 1, day, hour, minute, second))
  const same = read.getUTCFullYear() === year && read.getUTCMonth() === month! - 1 && read.getUTCDate() === day &&
    read.getUTCHours() === hour && read.getUTCMinutes() === minute && read.getUTCSeconds() === second
  return same ? at : undefined
}
