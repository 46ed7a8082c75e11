/**
 * A change's effect, measured against the build before it: `npm run bench:ab -- <git ref>`
 * (builds this checkout first). The ref is checked out into a temp worktree and built
 * there with this checkout's node_modules; then both builds run the chosen scenarios
 * (BENCH_ONLY, default sqlite) in alternating rounds, BENCH_ROUNDS of them (default 4),
 * the order of the two swapped every round. On a noisy machine one run of each says
 * little; runs taking turns see the same noise. The other BENCH_ settings apply (each
 * round measures BENCH_RUNS runs per scenario and build, 1 by default).
 *
 * Prints every run as it goes, then per scenario both builds' runs, their means, the
 * change of the mean, and how many of this build's runs beat every run of the other.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { postgresUnavailable, startPostgres } from '../scripts/postgres-cluster.ts'
import { pickLoadGenerator } from './load.ts'
import { int, ms, table } from './markdown.ts'
import { runScenario } from './measure.ts'
import { cleanUpOnExit, killAll } from './processes.ts'
import { rps, rowErrors, type Measured } from './results.ts'
import { cluster, scenarios, type Scenario } from './scenarios.ts'
import { BenchError, envNumber, fail, ROOT, SERVICE_ENTRY, SERVICE_NODE_FLAGS, settings, startFlags } from './settings.ts'

const rounds = Math.max(1, envNumber('BENCH_ROUNDS', 4))

interface Build { name: string, entry: string, flags: string[] }

let worktree: string | undefined
let tempRoot: string | undefined
/** The throwaway PostgreSQL cluster's own clean-up, when one was started. */
const teardowns: Array<() => unknown> = []

function cleanUp (): void {
  killAll()
  if (worktree !== undefined) {
    try {
      execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: ROOT, stdio: 'ignore' })
    } catch {
      // Removed below all the same; `git worktree prune` forgets it.
    }
    rmSync(worktree, { recursive: true, force: true })
    worktree = undefined
  }
  if (tempRoot !== undefined && !settings.keep) rmSync(tempRoot, { recursive: true, force: true })
  tempRoot = undefined
}

cleanUpOnExit('bench:ab', cleanUp)

/** The ref checked out and built in a worktree, with this checkout's dependencies. */
function buildRef (ref: string, root: string): Build {
  const commit = git('rev-parse', '--short', `${ref}^{commit}`)
  if (git('diff', '--name-only', commit, '--', 'package-lock.json') !== '') {
    process.stderr.write(`bench:ab: ${ref}'s package-lock.json differs from this checkout's; it runs with this checkout's node_modules\n`)
  }
  worktree = join(root, 'other')
  git('worktree', 'add', '--detach', worktree, commit)
  symlinkSync(join(ROOT, 'node_modules'), join(worktree, 'node_modules'))
  process.stderr.write(`bench:ab: building ${ref} (${commit})\n`)
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], { cwd: worktree, stdio: 'inherit' })
  const start = JSON.parse(readFileSync(join(worktree, 'package.json'), 'utf8')).scripts.start
  return { name: commit.startsWith(ref) ? commit : `${ref} (${commit})`, entry: join(worktree, 'dist', 'src', 'server.js'), flags: startFlags(start) }
}

function git (...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
}

/** The scenario with its service started from the given build. */
function on (build: Build, scenario: Scenario): Scenario {
  const { argv, env } = scenario.server
  const entry = argv.indexOf(SERVICE_ENTRY)
  return { ...scenario, server: { env, argv: [...build.flags, build.entry, ...argv.slice(entry + 1)] } }
}

async function main (): Promise<number> {
  const ref = process.argv[2]
  if (ref === undefined || ref === '') fail('usage: npm run bench:ab -- <git ref to compare this checkout with>')
  if (!existsSync(SERVICE_ENTRY)) fail(`${SERVICE_ENTRY} is missing: run npm run build first (npm run bench:ab does)`)
  const names = settings.only ?? ['sqlite']
  const selected = names.map((name) => scenarios.find((s) => s.name === name) ?? fail(`BENCH_ONLY: no scenario ${name}`))
  for (const scenario of selected) {
    if (!scenario.server.argv.includes(SERVICE_ENTRY)) fail(`${scenario.name} does not run the service: both builds would run the same server`)
  }
  const root = mkdtempSync(join(tmpdir(), 'plant-bench-ab-'))
  tempRoot = root
  const builds: Build[] = [{ name: `this checkout (${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', 'src', 'schemas', 'package.json') === '' ? '' : ', modified'})`, entry: SERVICE_ENTRY, flags: SERVICE_NODE_FLAGS }, buildRef(ref, root)]
  const load = pickLoadGenerator()
  if (cluster.url === undefined && postgresUnavailable() === undefined && selected.some((s) => s.name.startsWith('postgres'))) {
    cluster.url = (await startPostgres({ teardown: (fn) => { teardowns.push(fn) } })).url
  }
  const runs = new Map<string, Measured[][]>(selected.map((s) => [s.name, [[], []]]))
  let errors = 0
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? [0, 1] : [1, 0]
    for (const scenario of selected) {
      for (const b of order) {
        const row = await runScenario(on(builds[b], scenario), load, join(root, `${round}-${b}`))
        if (row.error !== undefined) fail(`${scenario.name} on ${builds[b].name}: ${row.error}`)
        const { status, socket } = rowErrors(row)
        errors += status + socket
        runs.get(scenario.name)![b].push(...row.runs)
        for (const run of row.runs) {
          const pending = run.webhooks === undefined ? '' : `, ${int(run.webhooks.pending)} deliveries pending after it`
          process.stderr.write(`  round ${round}, ${builds[b].name}: ${int(rps(run.result))}/s, p99 ${ms(run.result.p99Us)} ms${pending}${status + socket > 0 ? `, ${status} non-2xx, ${socket} socket errors` : ''}\n`)
        }
      }
    }
  }

  console.log(`# ${builds[0].name} against ${builds[1].name}\n`)
  console.log(`${rounds} alternating rounds, ${settings.seconds} s runs after ${settings.warmupSeconds} s of warm-up, ${settings.connections} connections, ${load.name}; Node ${process.version}.\n`)
  const rows = selected.map(({ name }) => {
    const [mine, theirs] = runs.get(name)!.map((measured) => measured.map((m) => rps(m.result)))
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length
    const p99s = (b: number): string => runs.get(name)![b].map((m) => ms(m.result.p99Us)).join(', ')
    return [
      name,
      theirs.map(int).join(', '), int(mean(theirs)), p99s(1),
      mine.map(int).join(', '), int(mean(mine)), p99s(0),
      `${((mean(mine) / mean(theirs) - 1) * 100).toFixed(1)}%`,
      `${mine.filter((x) => x > Math.max(...theirs)).length} of ${mine.length}`
    ]
  })
  console.log(table(['scenario', `${builds[1].name}: requests/s`, 'mean', 'p99 ms', 'this checkout: requests/s', 'mean', 'p99 ms', 'change of the mean', 'runs above all of the other'], rows))
  if (errors > 0) console.log(`\n**${errors} requests failed: the comparison is not valid.**`)
  return errors > 0 ? 1 : 0
}

try {
  process.exitCode = await main()
} catch (err) {
  process.stderr.write(`bench:ab: ${err instanceof BenchError ? err.message : (err as Error).stack ?? String(err)}\n`)
  process.exitCode = 2
} finally {
  for (const teardown of teardowns.reverse()) await teardown()
  cleanUp()
}
