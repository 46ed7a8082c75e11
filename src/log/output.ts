import { hostname } from 'node:os'
import pino from 'pino'

export interface LogOutputSizes {
  /** A block is written once it holds this many bytes… */
  minLength: number
  /** …or after this many milliseconds, however little it holds. */
  periodicFlush: number
  /** Past this many bytes waiting (a reader that stopped reading, a full disk), new lines are dropped. */
  maxLength: number
  /** Bytes one write may take: an event-loop turn under load logs tens of KiB, and one write a turn must keep up. */
  maxWrite: number
}

// sonic-boom's types describe only its utf8 mode.
type ByteSonicBoom = Omit<ReturnType<typeof pino.destination>, 'write'> & { write: (data: Buffer) => boolean, destroyed: boolean }

// A full pipe holds up a graceful shutdown, or the exit, this long at most.
const PATIENCE_MS = 1000

// Run before pino's own exit listener, whose flushSync would retry a failing write forever.
const atExit = new Set<() => void>()
process.prependListener('exit', () => { for (const flush of atExit) flush() })

/**
 * pino's asynchronous destination (sonic-boom) on a file descriptor, made safe for a
 * service: a failed write never throws, lines dropped are counted and said, and what
 * waits is written at exit. `stream` is what pino writes to.
 */
export function logOutput (fd: number, sizes: LogOutputSizes) {
  let giveUpAt = -Infinity
  let failing = false
  let dropped = 0
  let notice: Buffer | undefined
  const sonic = pino.destination({
    dest: fd,
    sync: false,
    // Buffers: in utf8 mode sonic-boom measures its whole pending string again at every line.
    contentMode: 'buffer',
    ...sizes,
    // While running, a full pipe (EAGAIN) is retried at the next block or flush, which keeps
    // up with a slow reader better than sonic-boom's fixed 100 ms; at exit, for PATIENCE_MS.
    retryEAGAIN: () => Date.now() < giveUpAt
  }) as unknown as ByteSonicBoom

  function tellDropped (): void {
    if (dropped === 0) return
    notice = Buffer.from(droppedLine(dropped))
    dropped = 0
    sonic.write(notice)
  }
  sonic.on('drop', (data: Buffer) => { if (data !== notice) dropped++ })
  // Caught up: the count goes out after the lines that were kept.
  sonic.on('drain', tellDropped)
  // A failed write keeps its lines for the next block or flush; unlistened, the error would
  // end the process. A full pipe is not failing: exit waits for it.
  sonic.on('error', (err: NodeJS.ErrnoException) => { if (err.code !== 'EAGAIN' && err.code !== 'EBUSY') failing = true })
  sonic.on('write', () => { failing = false })

  /** What exit runs: writes every line waiting, unless writing fails or the pipe stays full PATIENCE_MS. */
  function flushAtExit (): void {
    giveUpAt = Date.now() + PATIENCE_MS
    try {
      if (!failing && !sonic.destroyed) {
        tellDropped()
        sonic.flushSync()
        return
      }
    } catch {}
    sonic.destroy()
  }
  atExit.add(flushAtExit)
  sonic.on('close', () => atExit.delete(flushAtExit))

  /**
   * Resolves once the write in flight, which flushAtExit cannot wait for, is out or
   * failed, after PATIENCE_MS at most: a graceful shutdown awaits it before exiting.
   */
  async function flush (): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, PATIENCE_MS)
      sonic.flush(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  const stream = { write: (line: string) => sonic.write(Buffer.from(line)) }
  return { stream, sonic, flush, flushAtExit }
}

export type LogOutput = ReturnType<typeof logOutput>

/** A gap in the log is never silent: a warning in pino's shape says how many lines it lost. */
function droppedLine (count: number): string {
  const msg = `${count} log lines dropped: standard output did not take them in time`
  return JSON.stringify({ level: 40, time: new Date().toISOString(), pid: process.pid, hostname: hostname(), dropped: count, msg }) + '\n'
}
