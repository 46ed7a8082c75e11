/**
 * A change measured against another build: `npm run bench:ab -- <git ref>` builds this checkout,
 * checks the ref out into a temp worktree and builds it with this checkout's node_modules, then runs
 * the scenarios (BENCH_ONLY, default: memory, sqlite and sqlite reads by id) on both builds in
 * BENCH_ROUNDS alternating rounds (default 8), the order swapped every round so both see the same
 * drift of a noisy machine. Prints each round's ratio (this checkout / the ref), the median, and in
 * how many rounds this checkout was faster.
 * The other BENCH_ settings of bench/run.ts apply; each round runs each build once.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { int, ms, runScenario, table, wrkVersion } from './measure.ts'
import { errors, type Row } from './results.ts'
import { BenchError, buildAt, fail, ROOT, select, settings, withPostgres, type Build } from './scenarios.ts'

const DEFAULT = ['memory', 'sqlite', 'sqlite GET /plants/{id}']

const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

function buildRef (ref: string, worktree: string): Build {
  const commit = git('rev-parse', '--short', `${ref}^{commit}`)
  git('worktree', 'add', '--detach', worktree, commit)
  symlinkSync(join(ROOT, 'node_modules'), join(worktree, 'node_modules'))
  process.stderr.write(`bench:ab: building ${ref} (${commit})\n`)
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], { cwd: worktree, stdio: 'inherit' })
  return buildAt(worktree, commit.startsWith(ref) ? commit : `${ref} (${commit})`)
}

async function main (): Promise<number> {
  const ref = process.argv[2]
  if (ref === undefined || ref === '') fail('usage: npm run bench:ab -- <git ref> (BENCH_ROUNDS=8 rounds, BENCH_ONLY=scenarios)')
  const selected = select(settings.only ?? DEFAULT, false)
  const framework = selected.find((s) => s.server === 'framework')
  if (framework !== undefined) fail(`${framework.name} does not run the service: both builds would run the same server`)
  wrkVersion()
  const mine = buildAt(ROOT, `this checkout (${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', 'src', 'schemas', 'package.json') === '' ? '' : ', modified'})`)
  const root = mkdtempSync(join(tmpdir(), 'plant-bench-ab-'))
  const worktree = join(root, 'other')
  const teardowns: Array<() => Promise<void>> = []
  const cleanUp = (): void => {
    try {
      git('worktree', 'remove', '--force', worktree)
    } catch {} // never added
    rmSync(root, { recursive: true, force: true })
  }
  process.once('exit', cleanUp)
  // Per scenario, per round: [this checkout, the ref].
  const rows = new Map<string, Array<[Row, Row]>>(selected.map((s) => [s.name, []]))
  let failed = 0
  try {
    const builds = [mine, buildRef(ref, worktree)]
    const noPostgres = await withPostgres(selected, teardowns)
    if (noPostgres !== undefined) fail(`the postgres scenarios cannot run: ${noPostgres}`)
    for (let round = 1; round <= settings.rounds; round++) {
      for (const scenario of selected) {
        const pair: Row[] = []
        for (const b of round % 2 === 1 ? [0, 1] : [1, 0]) pair[b] = await runScenario(scenario, builds[b], root, 1)
        rows.get(scenario.name)!.push([pair[0], pair[1]])
        failed += pair.reduce((sum, row) => sum + errors(row.runs[0].result), 0)
        const [a, b] = pair
        process.stderr.write(`  round ${round} ${scenario.name}: ${int(a.requestsPerSecond!)}/s against ${int(b.requestsPerSecond!)}/s, ratio ${(a.requestsPerSecond! / b.requestsPerSecond!).toFixed(3)}\n`)
      }
    }
    console.log(`\n${builds[0].name} against ${builds[1].name}: ${settings.rounds} alternating rounds of ${settings.seconds} s after ${settings.warmupSeconds} s of warm-up, ${settings.connections} connections; Node ${process.version}\n`)
  } finally {
    for (const teardown of teardowns.reverse()) await teardown()
    cleanUp()
  }

  const lines = [['scenario', 'round', 'this requests/s', 'p99 ms', 'ref requests/s', 'p99 ms', 'ratio']]
  for (const [name, pairs] of rows) {
    const ratios = pairs.map(([a, b]) => a.requestsPerSecond! / b.requestsPerSecond!)
    pairs.forEach(([a, b], i) => lines.push([name, String(i + 1), int(a.requestsPerSecond!), ms(a.p99Us!), int(b.requestsPerSecond!), ms(b.p99Us!), ratios[i].toFixed(3)]))
    const med = (pick: (pair: [Row, Row]) => number): number => median(pairs.map(pick))
    lines.push([name, 'median', int(med(([a]) => a.requestsPerSecond!)), ms(med(([a]) => a.p99Us!)), int(med(([, b]) => b.requestsPerSecond!)), ms(med(([, b]) => b.p99Us!)), median(ratios).toFixed(3)])
  }
  console.log(table(lines))
  console.log('\nratio: this checkout\'s requests/s over the ref\'s in the same round; above 1 is faster.')
  // How many rounds agree with the median's direction: a change is shown only when most do.
  for (const [name, pairs] of rows) {
    const ratios = pairs.map(([a, b]) => a.requestsPerSecond! / b.requestsPerSecond!)
    const faster = ratios.filter((r) => r > 1).length
    console.log(`${name}: median ${median(ratios).toFixed(3)}×, this checkout faster in ${faster} of ${ratios.length} rounds, slower in ${ratios.length - faster}`)
  }
  if (failed > 0) console.log(`${int(failed)} requests failed: the comparison is not valid.`)
  return failed > 0 ? 1 : 0
}

try {
  process.exitCode = await main()
} catch (err) {
  process.stderr.write(`bench:ab: ${err instanceof BenchError ? err.message : (err as Error).stack}\n`)
  process.exitCode = 2
}
