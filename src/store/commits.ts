import { EventEmitter } from 'node:events'

// A commit's news travels one way: the writes of a transaction count what they did in its
// Commit, and the store emits `committed` with it once the transaction has committed (on
// SQLite, once it is on disk). Other instances' commits are found by polling.

/** What one transaction's writes did, counted as they run in it. */
export class Commit {
  /** Events written: the change feed has more to show. */
  events = 0
  /** Deliveries queued, or made due again: work for the dispatcher. */
  deliveries = 0
  /** Plants deleted: their earlier events wait for the cleanup to erase them. */
  deletions = 0
  /** Subscriptions added, deleted or enabled: the dispatcher reads them again. */
  subscriptions = 0
}

// A type, not an interface: EventEmitter's map of events takes no interface.
export type CommitEvents = { committed: [Commit] }

/** The store's one event: `committed`, once for each transaction that did something a Commit counts. */
export class Commits extends EventEmitter<CommitEvents> {
  tell (commit: Commit): void {
    if (commit.events > 0 || commit.deliveries > 0 || commit.deletions > 0 || commit.subscriptions > 0) this.emit('committed', commit)
  }
}
