import { writev, writeSync } from 'node:fs'
import { monotonicMs } from './monotonic-clock.ts'

export interface LogOutputOptions {
  /** A block is written once it holds this many bytes… */
  blockBytes: number
  /** …or after this many milliseconds, however little it holds. */
  flushMs: number
  /** Past this many bytes waiting (a reader that stopped reading), lines are dropped… */
  maxWaitingBytes: number
  /** …and once lines are taken again, this line says how many were dropped before them. */
  droppedLine: (count: number) => string
}

// Lines gather in buffers of this size while a write is in flight. With 64 KiB, the p99 of
// memory-store creates doubled (all of eight runs).
const BUFFER_BYTES = 16 * 1024
// A full pipe (EAGAIN) is tried again after this long rather than at the next line.
const RETRY_MS = 10
// At exit, a full pipe is waited for this long at most: a reader that never reads
// must not keep a stopping process alive.
const EXIT_PATIENCE_MS = 1000
// What flushSync waits on, a millisecond at a time, while a full pipe drains.
const PAUSE = new Int32Array(new SharedArrayBuffer(4))
const NEWLINE = 0x0a

/** What stands where lines were lost: the end of a line cut short, if one was, and how many lines. */
interface Notice { buffer: Buffer, lines: number, cut: boolean }

/**
 * The log's lines on their way to a file descriptor (standard output), written
 * asynchronously: a line is copied into a buffer as UTF-8 and the request that logged
 * it goes on; the buffer is written once it holds a block, and at least every `flushMs`.
 * pino's SonicBoom did the same with more work a line: it measured each line's UTF-8
 * length, concatenated the lines into one string, and encoded every block twice. A
 * request's line, through pino, takes about a third less CPU here (README, Performance).
 */
export class LogOutput {
  readonly #fd: number
  readonly #options: LogOutputOptions
  /** Lines ready to be written, oldest first; while a write is in flight, the first #inFlight are its. */
  readonly #ready: Buffer[] = []
  #inFlight = 0
  /** Where the next lines go, and how many bytes of it hold lines already. */
  #open: Buffer | undefined
  #filled = 0
  /** Bytes of lines not written yet, the write in flight included. */
  #waiting = 0
  #writing = false
  /** The pipe was full (EAGAIN): nothing is written until RETRY_MS have passed. */
  #paused = false
  /** Lines dropped since the last one taken. */
  #dropped = 0
  /** The rest of a line that a write cut short (a disk that filled up during the write), while it waits. */
  #tail: Buffer | undefined
  /** The notice of the last write that failed, while it waits to be written. */
  #notice: Notice | undefined
  /** Told when the write in flight ends (see flush). */
  #afterWrite: Array<() => void> = []

  constructor (fd: number, options: LogOutputOptions) {
    this.#fd = fd
    this.#options = options
    setInterval(() => { this.#writeNext() }, options.flushMs).unref()
  }

  write (line: string): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8.
    const most = 3 * line.length
    if (this.#waiting + most > this.#options.maxWaitingBytes) {
      this.#dropped++
      return
    }
    if (this.#dropped > 0) {
      const count = this.#dropped
      this.#dropped = 0
      this.#take(this.#options.droppedLine(count))
    }
    this.#take(line)
  }

  #take (line: string): void {
    const most = 3 * line.length
    if (this.#open === undefined || this.#filled + most > this.#open.length) {
      this.#seal()
      this.#open = Buffer.allocUnsafe(Math.max(BUFFER_BYTES, most))
    }
    const bytes = this.#open.write(line, this.#filled)
    this.#filled += bytes
    this.#waiting += bytes
    if (this.#waiting >= this.#options.blockBytes) this.#writeNext()
  }

  /**
   * Resolves once every line written so far is out, or after EXIT_PATIENCE_MS of a full
   * pipe. A graceful shutdown awaits it before exiting: at exit, flushSync cannot wait
   * for a write in flight, which may still be queued behind other work on libuv's thread
   * pool, and whose lines would then be lost with the process.
   */
  async flush (): Promise<void> {
    const giveUp = monotonicMs() + EXIT_PATIENCE_MS
    while (this.#waiting > 0 && monotonicMs() < giveUp) {
      await new Promise<void>((resolve) => {
        // Also looked at again after RETRY_MS: paused on a full pipe, nothing else may
        // write before giveUp, and this timer keeps the awaiting process alive meanwhile.
        const timer = setTimeout(told, RETRY_MS)
        function told (): void {
          clearTimeout(timer)
          resolve()
        }
        this.#afterWrite.push(told)
        this.#writeNext()
      })
    }
  }

  /** Writes every line waiting before it returns: at exit, there is no event loop to write them. */
  flushSync (): void {
    this.#seal()
    // A write in flight has its lines: it ends on libuv's thread pool or is lost with the
    // process (a graceful shutdown awaited flush first).
    const from = this.#writing ? this.#inFlight : 0
    const giveUp = monotonicMs() + EXIT_PATIENCE_MS
    while (this.#ready.length > from) {
      const buffer = this.#ready[from]
      try {
        this.#wrote(from, writeSync(this.#fd, buffer))
      } catch (err) {
        // At exit, with no write to come after, lines lost are not counted.
        if (codeOf(err) !== 'EAGAIN' || monotonicMs() > giveUp) this.#failed(from, 1, false)
        else Atomics.wait(PAUSE, 0, 0, 1)
      }
    }
  }

  /** Makes the lines gathered so far ready to write; the rest of their buffer takes the next ones. */
  #seal (): void {
    if (this.#open === undefined || this.#filled === 0) return
    this.#ready.push(this.#open.subarray(0, this.#filled))
    this.#open = this.#open.subarray(this.#filled)
    this.#filled = 0
  }

  /**
   * Writes every buffer ready, in one write. A write's end is seen once an event-loop
   * turn, and a turn that serves 200 requests logs about 50 KiB: written a buffer at a
   * time, the lines fell behind for good under load, and were dropped (README, Logging).
   */
  #writeNext (): void {
    if (this.#writing || this.#paused || this.#waiting === 0) return
    this.#seal()
    const buffers = this.#ready.slice()
    this.#inFlight = buffers.length
    this.#writing = true
    writev(this.#fd, buffers, null, (err, written) => {
      this.#writing = false
      if (err === null) {
        this.#wrote(0, written)
        if (this.#waiting >= this.#options.blockBytes) this.#writeNext()
      } else if (err.code === 'EAGAIN') {
        // A full pipe: the lines wait for its reader (up to maxWaitingBytes of them).
        this.#paused = true
        setTimeout(() => { this.#paused = false; this.#writeNext() }, RETRY_MS).unref()
      } else {
        this.#failed(0, buffers.length)
      }
      for (const told of this.#afterWrite.splice(0)) told()
    })
  }

  /** Takes what a write wrote off the ready buffers from `index` on. */
  #wrote (index: number, written: number): void {
    this.#waiting -= written
    let left = written
    while (left > 0) {
      const buffer = this.#ready[index]
      if (left < buffer.length) {
        const rest = buffer.subarray(left)
        this.#ready[index] = rest
        this.#tail = buffer[left - 1] === NEWLINE ? undefined : rest
        return
      }
      left -= buffer.length
      this.#ready.splice(index, 1)
    }
  }

  /**
   * Lines that could not be written (the reader gone, a full disk) are dropped: the log
   * never stops the service. In their place, a notice: the end of the line whose head
   * was written before a write was cut short (else the next line would be joined to
   * it), and a line counting the lines lost. A notice that fails in turn is counted
   * into the next one, not as a line lost.
   */
  #failed (index: number, count = 1, notice = true): void {
    let lines = 0
    let cut = false
    for (const buffer of this.#ready.splice(index, count)) {
      this.#waiting -= buffer.length
      if (buffer === this.#notice?.buffer) {
        lines += this.#notice.lines
        cut ||= this.#notice.cut
        continue
      }
      cut ||= buffer === this.#tail
      for (let at = buffer.indexOf(NEWLINE); at !== -1; at = buffer.indexOf(NEWLINE, at + 1)) lines++
    }
    if (!notice || lines === 0) return
    const buffer = Buffer.from((cut ? '\n' : '') + this.#options.droppedLine(lines))
    this.#notice = { buffer, lines, cut }
    this.#ready.splice(index, 0, buffer)
    this.#waiting += buffer.length
  }
}

function codeOf (err: unknown): unknown {
  return (err as NodeJS.ErrnoException | null)?.code
}
