import type Database from 'better-sqlite3'
import { codeOf } from '../errors.ts'
import { refuseForeign, SCHEMA_VERSION } from './schema.ts'

// How many of integrity_check's findings a refusal quotes.
const FINDINGS = 3

/**
 * Throws, saying why, unless the connection's file is a plant store this code can serve:
 * a SQLite database, the store's, at a schema version no newer than the code's, whole
 * (PRAGMA integrity_check). Returns its schema version. Writes nothing.
 */
export function checkStoreFile (db: Database.Database, name: string): number {
  let version: number
  try {
    refuseForeign(db)
    version = Number(db.pragma('user_version', { simple: true }))
  } catch (err) {
    const code = codeOf(err)
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') throw new Error(`${name} is not a Plant Store database: it is not a SQLite database (${(err as Error).message})`, { cause: err })
    throw new Error(`${name} is not a Plant Store database: ${(err as Error).message}`, { cause: err })
  }
  if (version === 0) throw new Error(`${name} is not a Plant Store database: it holds no table (an empty SQLite file)`)
  if (version > SCHEMA_VERSION) {
    throw new Error(`${name} is at schema version ${version}, newer than this code's ${SCHEMA_VERSION}: use the release that wrote it, or a later one`)
  }
  let findings: string[]
  try {
    // A row may hold several findings, a line each, under a heading.
    findings = (db.pragma('integrity_check') as Array<{ integrity_check: string }>)
      .flatMap((row) => row.integrity_check.split('\n')).filter((line) => !line.startsWith('***'))
  } catch (err) {
    findings = [(err as Error).message]
  }
  if (findings.length !== 1 || findings[0] !== 'ok') {
    throw new Error(`${name} fails PRAGMA integrity_check: ${findings.slice(0, FINDINGS).join('; ')}${findings.length > FINDINGS ? ` (and ${findings.length - FINDINGS} more)` : ''}`)
  }
  return version
}
