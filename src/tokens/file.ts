import { readFileSync } from 'node:fs'
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType } from '@sinclair/typebox/errors'
import { TokenEntry, TokensFile } from '../../schemas/tokens-file.js'
import type { Token } from './registry.js'

/** Tokens that cannot be used: the message names the entry by number and name, and the file when one was read. */
export class TokensFileError extends Error {}

const checker = TypeCompiler.Compile(TokensFile)
const fields: Record<string, TSchema> = TokenEntry.properties

/**
 * API_TOKENS_FILE as the tokens it grants. Synchronous: it is read at start and on
 * SIGHUP only, and holds a few entries.
 */
export function loadTokensFile (file: string): Token[] {
  return readEntries(file).map(({ name, sha256, scopes, expiresAt }) => ({
    name,
    hash: Buffer.from(sha256, 'hex'),
    scopes: new Set(scopes),
    expiresAt: expiresAt === undefined ? undefined : new Date(expiresAt)
  }))
}

/** The file's entries, read and checked; a refusal names the file first. */
export function readEntries (file: string): TokenEntry[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new TokensFileError(`${file} cannot be read: ${(err as Error).message}`)
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
 * The entries, once they have the schema's shape, name real moments, and repeat no
 * name or hash (a hash twice would make one token two entries with different scopes).
 */
export function checkEntries (value: unknown): TokenEntry[] {
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
    if (expiresAt !== undefined && Number.isNaN(Date.parse(expiresAt))) throw refusal(entries, i, problem('expiresAt'))
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
