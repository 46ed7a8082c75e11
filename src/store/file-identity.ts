import { statSync } from 'node:fs'

/**
 * Whether a path still names the file a store opened there. A SQLite file deleted while
 * the service runs (a deploy that replaces the release's directory, a cleanup) goes on
 * being written through the open connection: every create answered 200, and the
 * plants were gone at the next start. So does one replaced by another file.
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
