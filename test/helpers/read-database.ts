import Database from 'better-sqlite3'
import pg from 'pg'

/** How to read a store's database on either engine: SQLite's connection is synchronous, pg's not. */
export interface DatabaseRead<T> {
  sqlite: (db: Database.Database) => T
  postgres: (client: pg.Client) => Promise<T>
}

/** Reads the database a store's DATABASE_URL names, on a connection of its own (SQLite's read-only), closed after. */
export async function readDatabase<T> (url: string, read: DatabaseRead<T>): Promise<T> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { readonly: true })
    try {
      return read.sqlite(db)
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await read.postgres(client)
  } finally {
    await client.end()
  }
}
