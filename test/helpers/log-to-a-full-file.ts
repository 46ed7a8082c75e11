/**
 * A LogOutput writing to a file that fills up, run in a process of its own whose file
 * size limit (`ulimit -f`, set by whoever starts it) stands in for a full disk: a write
 * across the limit is cut short, later ones fail (EFBIG). Then the file is emptied, as if
 * space came back, and three more lines are written. Prints what the file held before and
 * after, as JSON: `log-to-a-full-file.ts <path> <lines>`, run with the test's own Node
 * options (which strip its types).
 */
import { ftruncateSync, openSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { LogOutput } from '../../src/log-output.ts'

// Node ignores the signal a write past the limit sends. Under tap, its process tracking
// catches it, then raises it again and the process dies: a listener of our own stops that.
process.on('SIGXFSZ', () => {})

const [path, count] = process.argv.slice(2)
// 100 bytes: a file of 8 KiB ends within a line.
// Appending, as a shell's >> does: once emptied, the file is written from its start again.
const fd = openSync(path, 'a')
const output = new LogOutput(fd, { blockBytes: 1000, flushMs: 5, maxWaitingBytes: 1024 * 1024, droppedLine: (n) => `{"dropped":${n}}\n` })
const line = (i: number): string => `{"line":${String(i).padStart(5, '0')},"pad":"${'x'.repeat(76)}"}\n`

for (let i = 0; i < Number(count); i++) {
  output.write(line(i))
  if (i % 10 === 9) await sleep(1)
}
await output.flush()
const full = readFileSync(path, 'utf8')
ftruncateSync(fd, 0)
for (let i = 0; i < 3; i++) output.write(`{"after":${i}}\n`)
await output.flush()
process.stdout.write(JSON.stringify({ full, after: readFileSync(path, 'utf8') }))
