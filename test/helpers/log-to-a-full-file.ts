/**
 * The log's output on a file that fills up, in a process of its own whose file size
 * limit (`ulimit -f`, set by whoever starts it) stands in for a full disk.
 * `log-to-a-full-file.ts <path> <lines> recover`: empties the file once full, as if space
 * came back, logs three more lines and prints what the file held before and after, as JSON.
 * `log-to-a-full-file.ts <path> <lines> exit`: exits while the file is still full.
 */
import { ftruncateSync, openSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { logOutput } from '../../src/log/output.ts'

// Node ignores the signal a write past the limit sends, but tap's process tracking
// would raise it again and kill the process: a listener of our own stops that.
process.on('SIGXFSZ', () => {})

const [path, count, mode] = process.argv.slice(2)
// Appending, as a shell's >> does: once emptied, the file is written from its start again.
const fd = openSync(path, 'a')
const output = logOutput(fd, { minLength: 1000, periodicFlush: 5, maxLength: 1024 * 1024, maxWrite: 1024 * 1024 })
// 100 bytes: a file of 8 KiB ends within a line.
const line = (i: number): string => `{"line":${String(i).padStart(5, '0')},"pad":"${'x'.repeat(76)}"}\n`

for (let i = 0; i < Number(count); i++) {
  output.stream.write(line(i))
  if (i % 10 === 9) await sleep(1)
}
await output.flush()
const full = readFileSync(path, 'utf8')
if (mode === 'exit') process.exit(0)

ftruncateSync(fd, 0)
for (let i = 0; i < 3; i++) output.stream.write(`{"after":${i}}\n`)
await sleep(50)
await output.flush()
output.flushAtExit()
process.stdout.write(JSON.stringify({ full, after: readFileSync(path, 'utf8') }))
