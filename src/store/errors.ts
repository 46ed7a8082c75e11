// The store knows nothing of HTTP: the error path decides what each of these answers.

/** The store cannot serve now (disk full, file locked, database unreachable); nothing was written. */
export class StoreUnavailable extends Error {
  constructor (options?: ErrorOptions) {
    super('the plant store is unavailable', options)
    this.name = 'StoreUnavailable'
  }
}

/** Too many operations wait for the store (write queue full, or pool busy too long); nothing was written. */
export class StoreBusy extends Error {
  constructor (options?: ErrorOptions) {
    super('too many operations are waiting for the plant store', options)
    this.name = 'StoreBusy'
  }
}

/** The database refused this one plant (its size, encoding or a constraint); the others of its batch went on. */
export class PlantRejected extends Error {
  constructor (options?: ErrorOptions) {
    super('the plant store refused this plant', options)
    this.name = 'PlantRejected'
  }
}

/** The code a driver's error carries (SQLite's `SQLITE_…`, PostgreSQL's SQLSTATE, a socket's `E…`); empty when it has none. */
export function codeOf (err: unknown): string {
  const { code } = err as { code?: unknown }
  return typeof code === 'string' ? code : ''
}
