import type { ChangeRead, StoredChange } from '../store/changes.ts'

// The feed's answers are built from the stored bytes, never decoded into strings: a page
// costs its bytes once, whatever its characters, and a client that does not read it holds
// the one buffer.

const DATA = Buffer.from(',"data":')
const END = Buffer.from('}')
const ERASED = Buffer.from(',"erased":true}')
const COMMA = Buffer.from(',')
const FRAME_END = Buffer.from('\n\n')

/** One event as JSON, in pieces: its data is the stored body itself, the exact bytes its webhooks get (ids exact). */
function changeParts ({ seq, type, plantId, at, payload }: StoredChange): Buffer[] {
  const head = Buffer.from(`{"seq":${seq},"type":"${type}","at":"${at.toISOString()}","id":${plantId}`)
  return payload === null ? [head, ERASED] : [head, DATA, payload, END]
}

function byteLength (parts: Buffer[]): number {
  return parts.reduce((bytes, part) => bytes + part.length, 0)
}

/** An event as a Server-Sent Event: `id` its seq, `event` its type, `data` its JSON (one line: JSON escapes line breaks). */
export function eventFrame (change: StoredChange): Buffer {
  const parts = [Buffer.from(`id: ${change.seq}\nevent: ${change.type}\ndata: `), ...changeParts(change), FRAME_END]
  return Buffer.concat(parts, byteLength(parts))
}

/** A page as JSON, cut before the event that would take it past `budget` bytes (at least one event); `next` resumes after its last event. */
export function pageBody ({ changes, horizon, latest }: ChangeRead, after: number | undefined, budget: number): Buffer {
  const parts: Buffer[] = [Buffer.from('{"changes":[')]
  let bytes = parts[0].length
  let next = after ?? horizon
  let events = 0
  for (const change of changes) {
    const event = changeParts(change)
    if (events > 0) event.unshift(COMMA)
    const size = byteLength(event)
    if (bytes + size > budget && events > 0) break
    parts.push(...event)
    bytes += size
    next = change.seq
    events++
  }
  parts.push(Buffer.from(`],"next":${next},"latest":${latest}}`))
  return Buffer.concat(parts, bytes + parts[parts.length - 1].length)
}
