import { execFile, execFileSync, spawn } from 'node:child_process'
import { pbkdf2 } from 'node:crypto'
import { closeSync, constants, openSync, readFileSync, readSync, statSync } from 'node:fs'
import { once } from 'node:events'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import fc from 'fast-check'
import t from 'tap'
import { logOutput, type LogOutput, type LogOutputSizes } from '../../src/log/output.ts'
import { OUTPUT_SIZES } from '../../src/log/logger.ts'
import { fuzzSettings } from '../helpers/fuzz.ts'
import { NODE_ARGS } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'

// The log's output on real file descriptors: a file, a file that fills up, and a pipe
// whose reader stops reading or goes away. Seeded: FUZZ_SEED=<n> replays a run.

const { seed, numRuns } = fuzzSettings(60)

/** An output on `fd` (which it closes when destroyed), with the service's sizes but `sizes`. */
function output (fd: number, sizes: Partial<LogOutputSizes>): LogOutput {
  return logOutput(fd, { ...OUTPUT_SIZES, ...sizes })
}

async function destroyed (output: LogOutput): Promise<void> {
  if (output.sonic.destroyed) return
  const closed = new Promise((resolve) => output.sonic.once('close', resolve))
  output.sonic.destroy()
  await closed
}

/** A pipe whose writing end is non-blocking, as standard output is; its reader reads only when told. */
function pipe (dir: string): { reader: number, writer: number } {
  const path = join(dir, 'fifo')
  execFileSync('mkfifo', [path])
  // Opened for reading first, without blocking, so that the writer's open does not block.
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
  return { reader, writer }
}

/** Reads the pipe until nothing more has come for 300 ms (a full pipe is retried at the next block or flush). */
async function readUntilQuiet (fd: number): Promise<string> {
  let complete = ''
  for (let quiet = 0; quiet < 15;) {
    const more = drain(fd).toString()
    complete += more
    quiet = more === '' ? quiet + 1 : 0
    await sleep(20)
  }
  return complete
}

/** Reads whatever the pipe holds now. */
function drain (fd: number): Buffer {
  const chunks: Buffer[] = []
  const chunk = Buffer.alloc(64 * 1024)
  for (;;) {
    let read
    try {
      read = readSync(fd, chunk)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') break
      throw err
    }
    if (read === 0) break
    chunks.push(Buffer.from(chunk.subarray(0, read)))
  }
  return Buffer.concat(chunks)
}

t.test('any lines reach the file whole, in order and exactly as UTF-8, in blocks and within periodicFlush', async (t) => {
  const dir = t.testdir()
  let run = 0
  await fc.assert(fc.asyncProperty(
    fc.array(fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }) },
      // Any UTF-16 code units, lone surrogates included: written as Buffer.from writes them.
      { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
      { weight: 1, arbitrary: fc.string({ minLength: 20_000, maxLength: 40_000 }) }
    ), { maxLength: 200 }),
    fc.integer({ min: 1, max: 8192 }),
    async (lines, minLength) => {
      const path = join(dir, `log-${run++}`)
      const log = output(openSync(path, 'w'), { minLength, periodicFlush: 5 })
      try {
        for (const line of lines) log.stream.write(line)
        const expected = Buffer.concat(lines.map((line) => Buffer.from(line)))
        const { value: size } = await retryUntil(async () => statSync(path).size, (size) => size === expected.length, 2000, 5)
        if (size !== expected.length) return false
        return readFileSync(path).equals(expected)
      } finally {
        await destroyed(log)
      }
    }
  ), { seed, numRuns })
})

t.test('a busy turn\'s lines go out in one write: turns that each log 53 KiB, one write a turn, lose none', async (t) => {
  const path = join(t.testdir(), 'log')
  const log = output(openSync(path, 'w'), { maxLength: 1024 * 1024 })
  t.teardown(async () => { await destroyed(log) })
  const line = (i: number): string => `{"line":${i},"pad":"${'x'.repeat(250)}"}\n`
  // A turn that serves 200 requests logs 200 lines, about 53 KiB. A turn here lasts as long as
  // one write to the file, however slow the machine: writes that took less than a turn's lines
  // would fall behind by the rest each turn, and past maxLength (100 turns log 5 MB) drop lines.
  const turns = 100
  const perTurn = 200
  for (let turn = 0; turn < turns; turn++) {
    const written = once(log.sonic, 'write')
    for (let i = 0; i < perTurn; i++) log.stream.write(line(turn * perTurn + i))
    await written
  }
  await log.flush()
  log.flushAtExit()
  const written = readFileSync(path, 'utf8')
  const expected = Array.from({ length: turns * perTurn }, (_, i) => line(i)).join('')
  t.equal(written.length, expected.length, `${written.split('\n').length - 1} of ${turns * perTurn} lines in the file`)
  t.ok(written === expected, 'every line, whole and in order')
})

t.test('flushAtExit writes every line still waiting before it returns: what exit calls', async (t) => {
  const path = join(t.testdir(), 'log')
  const log = output(openSync(path, 'w'), { minLength: 512 * 1024, periodicFlush: 60_000 })
  t.teardown(async () => { await destroyed(log) })
  const lines = Array.from({ length: 1000 }, (_, i) => `{"line":${i}}\n`)
  for (const line of lines) log.stream.write(line)
  t.equal(statSync(path).size, 0, 'under a block and before periodicFlush: nothing written yet')
  log.flushAtExit()
  t.equal(readFileSync(path, 'utf8'), lines.join(''))
})

t.test('flush, then flushAtExit, write every line, the write queued behind busy thread-pool work included: a graceful shutdown', async (t) => {
  const path = join(t.testdir(), 'log')
  // Every thread of libuv's pool busy for a while: the log's write waits in its queue.
  const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4)
  const busy = Array.from({ length: threads }, async () => await new Promise((resolve) => { pbkdf2('x', 'y', 300_000, 32, 'sha256', resolve) }))
  const log = output(openSync(path, 'w'), { minLength: 64, periodicFlush: 60_000 })
  t.teardown(async () => { await destroyed(log) })
  const lines = Array.from({ length: 100 }, (_, i) => `{"line":${i}}\n`)
  for (const line of lines) log.stream.write(line)
  t.equal(statSync(path).size, 0, 'a write is in flight, queued behind the busy pool')
  await log.flush()
  log.flushAtExit()
  t.equal(readFileSync(path, 'utf8'), lines.join(''), 'every line is in the file')
  await Promise.all(busy)
})

t.test('a reader that does not read: flush returns within a second, and nothing is lost', async (t) => {
  const { reader, writer } = pipe(t.testdir())
  const log = output(writer, { periodicFlush: 5, maxLength: 1024 * 1024 })
  t.teardown(async () => { await destroyed(log); closeSync(reader) })
  const line = (i: number): string => `{"line":${i},"pad":"${'x'.repeat(80)}"}\n`
  // More than the pipe holds (64 KiB here), less than maxLength.
  for (let i = 0; i < 5000; i++) log.stream.write(line(i))
  const started = Date.now()
  await log.flush()
  const took = Date.now() - started
  t.ok(took < 2000, `flush resolved after ${took} ms`)
  // Not dropped: the lines go once the reader reads.
  const complete = await readUntilQuiet(reader)
  t.equal(complete, Array.from({ length: 5000 }, (_, i) => line(i)).join(''), 'every line, in order')
})

t.test('a process whose standard output is not read exits after about a second, with its own code', async (t) => {
  const script = `
    const { logOutput } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '..', '..', 'src', 'log', 'output.ts')).href)})
    process.stdout.isTTY // made non-blocking, as the service's logger does
    const log = logOutput(1, ${JSON.stringify(OUTPUT_SIZES)})
    for (let i = 0; i < 50_000; i++) log.stream.write('x'.repeat(99) + '\\n')
    setTimeout(() => process.exit(3), 200)`
  const started = Date.now()
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  // Never read: the pipe and the reader's buffer fill, then the child's writes meet EAGAIN.
  child.stdout.pause()
  const [code] = await once(child, 'exit')
  const took = Date.now() - started
  child.stdout.destroy()
  t.equal(code, 3)
  t.ok(took < 5000, `ended after ${took} ms`)
})

t.test('a reader that stops reading: lines wait up to maxLength, later ones are dropped whole, and once it reads, a warning counts them', async (t) => {
  const { reader, writer } = pipe(t.testdir())
  const maxLength = 256 * 1024
  const log = output(writer, { periodicFlush: 5, maxLength })
  t.teardown(async () => { await destroyed(log); closeSync(reader) })
  const line = (i: number): string => `{"line":${String(i).padStart(7, '0')},"pad":"${'x'.repeat(80)}"}\n`
  // 2 MB of lines, far more than the pipe and maxLength together.
  for (let i = 0; i < 20_000; i++) log.stream.write(line(i))
  const got = (await readUntilQuiet(reader)).split('\n').slice(0, -1)
  const warning = JSON.parse(got.pop() ?? '{}')
  t.ok(got.length > 0, 'the first lines arrived')
  t.ok(got.length * line(0).length <= maxLength, `no more than maxLength held: ${got.length} lines`)
  t.same(got, got.map((_, i) => line(i).slice(0, -1)), 'the first lines, whole and in order: only later ones were dropped')
  t.match(warning, { level: 40, dropped: 20_000 - got.length, msg: `${20_000 - got.length} log lines dropped: standard output did not take them in time` },
    'then a warning in pino\'s shape counts the lines dropped')
  t.type(warning.time, 'string')
  log.stream.write('{"again":true}\n')
  const { value: again } = await retryUntil(async () => drain(reader).toString(), (text) => text !== '', 2000, 10)
  t.equal(again, '{"again":true}\n', 'counted once')
})

const fullFile = join(import.meta.dirname, '..', 'helpers', 'log-to-a-full-file.ts')
/** Runs the helper under a file size limit of 8 KiB, which stands in for a full disk. */
async function logToAFullFile (...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', ['-c', 'ulimit -S -f 8 && exec "$@"', 'bash',
    process.execPath, ...NODE_ARGS, fullFile, ...args], { timeout: 20_000 })
  return stdout
}

t.test('a disk that fills up: lines wait, and once space is back, the line cut short is ended and every line follows', async (t) => {
  // 120 lines of 100 bytes: 81 and the head of the 82nd fit; the rest, and three more, fit again once emptied.
  const path = join(t.testdir(), 'log')
  const { full, after } = JSON.parse(await logToAFullFile(path, '120', 'recover')) as { full: string, after: string }
  const line = (i: number): string => `{"line":${String(i).padStart(5, '0')},"pad":"${'x'.repeat(76)}"}\n`
  const lines = Array.from({ length: 120 }, (_, i) => line(i)).join('')
  t.equal(full, lines.slice(0, 8192), 'the file filled up to its limit, with the first lines whole and the head of the next')
  t.equal(after, lines.slice(8192) + '{"after":0}\n{"after":1}\n{"after":2}\n', 'then the rest of that line, every later one, and the new ones')
})

t.test('a process that exits while the disk is still full exits at once, with its own code', async (t) => {
  const path = join(t.testdir(), 'log')
  const started = Date.now()
  await t.resolves(logToAFullFile(path, '300', 'exit'), 'exit code 0')
  t.ok(Date.now() - started < 10_000, `ended after ${Date.now() - started} ms`)
  t.equal(statSync(path).size, 8192)
})

t.test('a reader gone: lines go nowhere, and nothing throws or waits', async (t) => {
  const { reader, writer } = pipe(t.testdir())
  closeSync(reader)
  const log = output(writer, { minLength: 1, periodicFlush: 60_000, maxLength: 1024 })
  // pino makes a broken pipe's output do nothing, destroy included.
  t.teardown(() => { closeSync(writer) })
  t.doesNotThrow(() => { for (let i = 0; i < 100; i++) log.stream.write(`{"line":${i}}\n`) })
  await log.flush()
  await sleep(50)
  t.doesNotThrow(() => { log.stream.write('{"later":true}\n') })
  const started = Date.now()
  t.doesNotThrow(() => { log.flushAtExit() })
  t.ok(Date.now() - started < 500, 'flushAtExit returns at once')
})
