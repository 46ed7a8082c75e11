/**
 * The load generators: wrk with bench/request.lua, or bench/autocannon.ts where wrk is
 * missing, each run as its own process pinned to core 1 and each printing one
 * BENCH_RESULT line, parsed here into the same LoadResult. Also drives fills: exactly
 * these ids, each once, ended when every thread has sent its share.
 */
import { spawn, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { onPath, pinned, track } from './processes.ts'
import type { LoadResult } from './results.ts'
import type { RequestSpec } from './scenarios.ts'
import { BENCH, fail, ROOT, settings, TOKEN } from './settings.ts'

export interface LoadOptions {
  port: number
  request: RequestSpec
  /** First id; with `cycle`, ids wrap over base..base+cycle-1, in a scattered order. */
  base: number
  cycle?: number
  /** A timed run... */
  seconds?: number
  /** ...or exactly these many ids, base..base+total-1, each sent once (a fill). */
  total?: number
  /** Ends the run early (the server died): it then reports what it has. */
  abort?: AbortSignal
}

export interface LoadGenerator {
  name: string
  /** wrk's own (`wrk -v`); empty for autocannon. */
  version: string
  run: (options: LoadOptions) => Promise<LoadResult>
}

const TIMEOUT_SECONDS = 10
// Each wrk thread reports every 50,000 ids: minutes without a word means a stuck fill.
const FILL_STALL_MS = 180_000

function parseResult (output: string): LoadResult {
  const line = output.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
  if (line === undefined) fail(`the load generator printed no BENCH_RESULT line:\n${output.slice(-2000)}`)
  const r = JSON.parse(line.slice('BENCH_RESULT '.length))
  return {
    requests: r.requests,
    durationUs: r.duration_us,
    p50Us: r.p50_us,
    p99Us: r.p99_us,
    maxUs: r.max_us,
    statusErrors: r.status_errors,
    connectErrors: r.connect_errors,
    readErrors: r.read_errors,
    writeErrors: r.write_errors,
    timeouts: r.timeouts
  }
}

/**
 * Runs a load generator that prints BENCH_RESULT at its end. In a fill it prints
 * FILL_THREAD_DONE per thread once that thread has sent its share; when all have,
 * it is interrupted (wrk otherwise sleeps out its whole -d) and reports as usual.
 */
async function runLoad (command: string, args: string[], fillThreads: number, fillTotal: number, abort?: AbortSignal): Promise<LoadResult> {
  const child = track(spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }))
  const interrupt = (): void => { child.kill('SIGINT') }
  abort?.addEventListener('abort', interrupt)
  let output = ''
  let done = 0
  let filled = 0
  let lastProgress = Date.now()
  let lastLine = Date.now()
  // A fill has no clock of its own: one that stops progressing is ended, and fails on its errors.
  const watchdog = fillThreads === 0
    ? undefined
    : setInterval(() => { if (Date.now() - lastLine > FILL_STALL_MS) interrupt() }, 5_000)
  child.stdout!.setEncoding('utf8')
  child.stderr!.setEncoding('utf8')
  const lines = createInterface({ input: child.stdout! })
  lines.on('line', (line) => {
    output += line + '\n'
    lastLine = Date.now()
    if (line.startsWith('FILL_PROGRESS ')) {
      filled += Number(line.split(' ')[1])
      if (Date.now() - lastProgress > 10_000) {
        lastProgress = Date.now()
        process.stderr.write(`  … ${filled.toLocaleString('en-US')} of ${fillTotal.toLocaleString('en-US')}\n`)
      }
    }
    if (line.startsWith('FILL_THREAD_DONE') && ++done === fillThreads) child.kill('SIGINT')
  })
  child.stderr!.on('data', (chunk: string) => { output += chunk })
  const code = await new Promise<number | string | null>((resolve) => {
    child.once('close', (c, signal) => resolve(c ?? signal))
    child.once('error', (err) => resolve(err.message))
  })
  clearInterval(watchdog)
  abort?.removeEventListener('abort', interrupt)
  if (!output.includes('BENCH_RESULT ')) fail(`${command} ${args.join(' ')} exited (${code}) without a result:\n${output.slice(-2000)}`)
  return parseResult(output)
}

function wrkGenerator (wrk: string): LoadGenerator {
  return {
    name: 'wrk',
    version: /^wrk (\S+)/.exec(spawnSync(wrk, ['-v'], { encoding: 'utf8' }).stdout)?.[1] ?? '',
    async run (o) {
      const args = [
        `token=${TOKEN}`, `method=${o.request.method}`, `path=${o.request.path}`,
        `threads=${settings.threads}`, `base=${o.base}`
      ]
      if (o.request.body !== undefined) args.push(`body=${o.request.body}`)
      if (o.cycle !== undefined) args.push(`cycle=${o.cycle}`)
      if (o.total !== undefined) args.push(`total=${o.total}`)
      // A fill ends when its ids are sent, not on a clock: the day is only a bound.
      const seconds = o.total === undefined ? o.seconds ?? settings.seconds : 86_400
      const [command, argv] = pinned(1, wrk, [
        '-t', String(settings.threads), '-c', String(settings.connections), '-d', `${seconds}s`,
        '--timeout', `${TIMEOUT_SECONDS}s`, '-s', join(BENCH, 'request.lua'),
        `http://127.0.0.1:${o.port}`, '--', ...args
      ])
      return await runLoad(command, argv, o.total === undefined ? 0 : settings.threads, o.total ?? 0, o.abort)
    }
  }
}

function autocannonGenerator (): LoadGenerator {
  return {
    name: 'autocannon',
    version: '',
    async run (o) {
      const options = { ...o, connections: settings.connections, seconds: o.seconds ?? settings.seconds, token: TOKEN, timeoutSeconds: TIMEOUT_SECONDS }
      const [command, argv] = pinned(1, process.execPath, ['--import', 'tsx', join(BENCH, 'autocannon.ts'), JSON.stringify(options)])
      return await runLoad(command, argv, 0, o.total ?? 0, o.abort)
    }
  }
}

export function pickLoadGenerator (): LoadGenerator {
  const wanted = process.env.BENCH_LOAD
  const wrk = onPath('wrk')
  if ((wanted === undefined || wanted === 'wrk') && wrk !== undefined) return wrkGenerator(wrk)
  if (wanted === 'wrk') fail('BENCH_LOAD=wrk but wrk is not on PATH (apt-get install wrk)')
  // autocannon, a devDependency, tops out near 13k requests/s on a 2-core machine and so
  // hides differences between fast servers: wrk is preferred.
  return autocannonGenerator()
}
