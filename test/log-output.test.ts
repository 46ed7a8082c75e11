import { execFile, execFileSync } from 'node:child_process'
import { pbkdf2 } from 'node:crypto'
import { closeSync, constants, openSync, readFileSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import fc from 'fast-check'
import t from 'tap'
import { LogOutput } from '../src/log-output.ts'
import { fuzzSettings } from './helpers/fuzz.ts'
import { retryUntil } from './helpers/wait.ts'

// The log's output against Buffer.from, on real file descriptors: a file, and a pipe
// whose reader stops reading or goes away. Seeded: FUZZ_SEED=<n> replays a run.

const { seed, numRuns } = fuzzSettings(60)

// What a gap in the log says; the service's own, in pino's shape, is the logger's.
const droppedLine = (count: number): string => `{"dropped":${count}}\n`

function fifo (dir: string): string {
  const path = join(dir, 'fifo')
  execFileSync('mkfifo', [path])
  return path
}

/** Reads the pipe until nothing more has come for a while (the output retries a full pipe every 10 ms). */
async function readUntilQuiet (fd: number): Promise<string> {
  let complete = ''
  for (let quiet = 0; quiet < 5;) {
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

t.test('any lines reach the file whole, in order and exactly as UTF-8, in blocks and within flushMs', async (t) => {
  const dir = t.testdir()
  let run = 0
  await fc.assert(fc.asyncProperty(
    fc.array(fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }) },
      // Any UTF-16 code units, lone surrogates included: written as Buffer.from writes them.
      { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
      // Longer than one of the output's buffers can take.
      { weight: 1, arbitrary: fc.string({ minLength: 20_000, maxLength: 40_000 }) }
    ), { maxLength: 200 }),
    fc.integer({ min: 1, max: 8192 }),
    async (lines, blockBytes) => {
      const path = join(dir, `log-${run++}`)
      const fd = openSync(path, 'w')
      try {
        const output = new LogOutput(fd, { blockBytes, flushMs: 5, maxWaitingBytes: 16 * 1024 * 1024, droppedLine })
        for (const line of lines) output.write(line)
        const expected = Buffer.concat(lines.map((line) => Buffer.from(line)))
        const { value: size } = await retryUntil(async () => statSync(path).size, (size) => size === expected.length, 2000, 5)
        if (size !== expected.length) return false
        return readFileSync(path).equals(expected)
      } finally {
        closeSync(fd)
      }
    }
  ), { seed, numRuns })
})

t.test('lines logged faster than a block an event-loop turn all reach a file: busy turns of many requests lose none', async (t) => {
  const path = join(t.testdir(), 'log')
  const fd = openSync(path, 'w')
  t.teardown(() => { closeSync(fd) })
  const maxWaitingBytes = 1024 * 1024
  const output = new LogOutput(fd, { blockBytes: 4096, flushMs: 100, maxWaitingBytes, droppedLine })
  const line = (i: number): string => `{"line":${i},"pad":"${'x'.repeat(250)}"}\n`
  // A turn that serves 200 requests: 200 lines, about 53 KiB, and 2 ms of work, as
  // under 200 connections; 100 such turns log 5 MB, five times the waiting room.
  const turns = 100
  const perTurn = 200
  for (let turn = 0; turn < turns; turn++) {
    for (let i = 0; i < perTurn; i++) output.write(line(turn * perTurn + i))
    const until = performance.now() + 2
    while (performance.now() < until);
    await new Promise((resolve) => setImmediate(resolve))
  }
  await output.flush()
  const written = readFileSync(path, 'utf8')
  const expected = Array.from({ length: turns * perTurn }, (_, i) => line(i)).join('')
  t.equal(written.length, expected.length, `${written.split('\n').length - 1} of ${turns * perTurn} lines in the file`)
  t.ok(written === expected, 'every line, whole and in order')
})

t.test('flushSync writes every line still waiting before it returns: what exit calls', async (t) => {
  const path = join(t.testdir(), 'log')
  const fd = openSync(path, 'w')
  t.teardown(() => { closeSync(fd) })
  const output = new LogOutput(fd, { blockBytes: 1024 * 1024, flushMs: 60_000, maxWaitingBytes: 16 * 1024 * 1024, droppedLine })
  const lines = Array.from({ length: 1000 }, (_, i) => `{"line":${i}}\n`)
  for (const line of lines) output.write(line)
  t.equal(statSync(path).size, 0, 'under a block and before flushMs: nothing written yet')
  output.flushSync()
  t.equal(readFileSync(path, 'utf8'), lines.join(''))
})

t.test('flush resolves once a write queued behind busy thread-pool work is out: what a graceful shutdown awaits', async (t) => {
  const path = join(t.testdir(), 'log')
  const fd = openSync(path, 'w')
  t.teardown(() => { closeSync(fd) })
  // Every thread of libuv's pool busy for a while: the log's write waits in its queue.
  const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4)
  const busy = Array.from({ length: threads }, async () => await new Promise((resolve) => { pbkdf2('x', 'y', 300_000, 32, 'sha256', resolve) }))
  const output = new LogOutput(fd, { blockBytes: 64, flushMs: 60_000, maxWaitingBytes: 16 * 1024 * 1024, droppedLine })
  const lines = Array.from({ length: 100 }, (_, i) => `{"line":${i}}\n`)
  for (const line of lines) output.write(line)
  t.equal(statSync(path).size, 0, 'a write is in flight, queued behind the busy pool')
  await output.flush()
  t.equal(readFileSync(path, 'utf8'), lines.join(''), 'every line is in the file once flush resolves')
  await Promise.all(busy)
})

t.test('flush gives up on a reader that does not read, after about a second', async (t) => {
  const path = fifo(t.testdir())
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
  t.teardown(() => { closeSync(writer); closeSync(reader) })
  const output = new LogOutput(writer, { blockBytes: 4096, flushMs: 5, maxWaitingBytes: 1024 * 1024, droppedLine })
  const line = (i: number): string => `{"line":${i},"pad":"${'x'.repeat(80)}"}\n`
  // More than the pipe holds (64 KiB here), less than the waiting room.
  for (let i = 0; i < 5000; i++) output.write(line(i))
  const started = Date.now()
  await output.flush()
  const took = Date.now() - started
  t.ok(took >= 900 && took < 3000, `resolved after ${took} ms`)
  // Given up is not dropped: the lines go once the reader reads. Reading them all also
  // leaves the output idle before its descriptor is closed and reused.
  const complete = await readUntilQuiet(reader)
  t.equal(complete, Array.from({ length: 5000 }, (_, i) => line(i)).join(''), 'every line, in order')
})

t.test('a reader that stops reading: lines wait up to maxWaitingBytes, later ones are dropped whole, and writing resumes when it reads with a line saying how many', async (t) => {
  const path = fifo(t.testdir())
  // Opened for reading first, without blocking, so that the writer's open does not block.
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
  t.teardown(() => { closeSync(writer); closeSync(reader) })
  const maxWaitingBytes = 256 * 1024
  const output = new LogOutput(writer, { blockBytes: 4096, flushMs: 5, maxWaitingBytes, droppedLine })
  const line = (i: number): string => `{"line":${String(i).padStart(7, '0')},"pad":"${'x'.repeat(80)}"}\n`
  // 2 MB of lines, far more than the pipe and the waiting room together.
  for (let i = 0; i < 20_000; i++) output.write(line(i))
  const complete = await readUntilQuiet(reader)
  const got = complete.split('\n').slice(0, -1)
  t.ok(got.length > 0, 'the first lines arrived')
  t.ok(complete.length <= maxWaitingBytes, `no more than the waiting room held: ${complete.length} bytes`)
  t.ok(got.length < 20_000, `lines were dropped: ${got.length} of 20,000 arrived`)
  t.same(got, got.map((_, i) => line(i).slice(0, -1)), 'the first lines, whole and in order: only later ones were dropped')
  // The reader reads again: new lines go through, after one that counts the dropped.
  output.write('{"after":true}\n')
  const { value: after } = await retryUntil(async () => drain(reader).toString(), (text) => text !== '', 2000, 10)
  t.equal(after, droppedLine(20_000 - got.length) + '{"after":true}\n')
  output.write('{"again":true}\n')
  const { value: again } = await retryUntil(async () => drain(reader).toString(), (text) => text !== '', 2000, 10)
  t.equal(again, '{"again":true}\n', 'counted once')
})

t.test('a disk that fills up: the line cut short is ended once space is back, then a line counts every line lost', async (t) => {
  const path = join(t.testdir(), 'log')
  // A file size limit of 8 KiB stands in for a full disk: 81 lines of 100 bytes and the
  // head of the 82nd fit, the rest of the 300 fail.
  const { stdout } = await promisify(execFile)('bash', ['-c', 'ulimit -S -f 8 && exec "$@"', 'bash',
    process.execPath, ...process.execArgv, join(import.meta.dirname, 'helpers', 'log-to-a-full-file.ts'), path, '300'])
  const { full, after } = JSON.parse(stdout) as { full: string, after: string }
  const line = (i: number): string => `{"line":${String(i).padStart(5, '0')},"pad":"${'x'.repeat(76)}"}\n`
  t.equal(full.length, 8192, 'the file filled up to its limit')
  t.equal(full, Array.from({ length: 82 }, (_, i) => line(i)).join('').slice(0, 8192), 'the first lines, whole, then the head of the next')
  t.equal(after, '\n{"dropped":219}\n{"after":0}\n{"after":1}\n{"after":2}\n',
    'the head ended, then the 219 lines lost counted (the one cut short among them), then the new lines')
})

t.test('a reader gone: lines go nowhere, and nothing throws', async (t) => {
  const path = fifo(t.testdir())
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
  t.teardown(() => { closeSync(writer) })
  closeSync(reader)
  const output = new LogOutput(writer, { blockBytes: 1, flushMs: 5, maxWaitingBytes: 1024, droppedLine })
  t.doesNotThrow(() => {
    for (let i = 0; i < 100; i++) output.write(`{"line":${i}}\n`)
    output.flushSync()
  })
  await sleep(50)
  t.doesNotThrow(() => { output.write('{"later":true}\n') })
})
