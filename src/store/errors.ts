import type { ErrorCode } from '../../schemas/error.ts'

// The store knows nothing of HTTP: each error names its public code (schemas/error.ts),
// and the error path answers it as the catalogue says, as any error with a known code.

/** A failure of the store's, named by its public code; its message is the one clients read. */
export class StoreError extends Error {
  readonly code: ErrorCode

  constructor (code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
  }
}

/** The store cannot serve now (disk full, file locked, database unreachable); nothing was written. */
export class StoreUnavailable extends StoreError {
  constructor (options?: ErrorOptions) {
    super('store_unavailable', 'the plant store is unavailable right now; retry after the delay in Retry-After', options)
    this.name = 'StoreUnavailable'
  }
}

/** Too many operations wait for the store (write queue full, or pool busy too long); nothing was written. */
export class StoreBusy extends StoreError {
  constructor (options?: ErrorOptions) {
    super('store_busy', 'too many requests are waiting for the plant store; retry after the delay in Retry-After', options)
    this.name = 'StoreBusy'
  }
}

/** The database refused this one plant (its size, encoding or a constraint); the others of its batch went on. */
export class PlantRejected extends StoreError {
  constructor (options?: ErrorOptions) {
    super('plant_rejected', 'the plant store cannot keep this plant', options)
    this.name = 'PlantRejected'
  }
}

/** The code a driver's error carries (SQLite's `SQLITE_…`, PostgreSQL's SQLSTATE, a socket's `E…`); empty when it has none. */
export function codeOf (err: unknown): string {
  const { code } = err as { code?: unknown }
  return typeof code === 'string' ? code : ''
}
