import { statSync } from 'node:fs'

/**
 * Whether a path still names the file a store opened there: a SQLite file deleted or
 * replaced under the service takes writes through the open connection, lost at the next start.
 */
export class FileIdentity {
  readonly #path: string
  readonly #device: number
  readonly #inode: number

  constructor (path: string) {
    const { dev, ino } = statSync(path)
    this.#path = path
    this.#device = dev
    this.#inode = ino
  }

  /** Throws, saying what happened, unless the path names the file opened. */
  check (): void {
    const now = statSync(this.#path, { throwIfNoEntry: false })
    if (now !== undefined && now.dev === this.#device && now.ino === this.#inode) return
    throw new Error(`the database file ${this.#path} was ${now === undefined ? 'deleted' : 'replaced by another file'} while the service ran: ` +
      'what it wrote there since would be lost when the process ends; restart the service on the file that should hold the plants')
  }
}
