/**
 * Reads what bench/run.ts wrote. With one results file, prints its markdown as the run
 * printed it (the README's table); with two, compares them per scenario: requests/s
 * and p99 of each and the change from the first to the second, in %.
 *
 *   npx tsx bench/report.ts bench/results/A.json              the tables of one run
 *   npx tsx bench/report.ts bench/results/A.json B.json       B against A
 *
 * The rows shown are the median runs, as in the table. It measures nothing itself.
 */
import { int, ms, noise, render, table } from './markdown.ts'
import { median, readResults, rowErrors, rps, type BenchResults, type Row } from './results.ts'

const change = (from: number, to: number): string => from === 0 ? '–' : `${to >= from ? '+' : ''}${((to - from) / from * 100).toFixed(1)}%`

function describe (label: string, path: string, r: BenchResults): string {
  const runs = r.load.runs > 1 ? ` × ${r.load.runs}` : ''
  return `- ${label}: ${path}, ${r.date}; ${r.machine.cpuModel}, ${r.machine.cpuCount} cores, load average ${r.machine.loadAverage.toFixed(2)}; node ${r.node}; ` +
    `${r.load.generator}${r.load.version === '' ? '' : ` ${r.load.version}`}, ${r.load.connections} connections, measured ${r.load.seconds} s${runs}`
}

/** What differs between the two runs' conditions, so that a change is not taken for the service's. */
function differences (a: BenchResults, b: BenchResults): string[] {
  const conditions: Array<[string, (r: BenchResults) => unknown]> = [
    ['machine', (r) => `${r.machine.cpuModel}, ${r.machine.cpuCount} cores`],
    ['node', (r) => r.node],
    ['load generator', (r) => `${r.load.generator} ${r.load.version}`.trim()],
    ['connections', (r) => r.load.connections],
    ['threads', (r) => r.load.threads],
    ['warm-up s', (r) => r.load.warmupSeconds],
    ['measured s', (r) => r.load.seconds],
    ['runs', (r) => r.load.runs],
    ['pinned', (r) => r.machine.pinned]
  ]
  return conditions.filter(([, of]) => of(a) !== of(b)).map(([name, of]) => `${name} ${String(of(a))} → ${String(of(b))}`)
}

/** ⚠ when the row's numbers should not be trusted: errors in any run, or a noisy median run. */
function flagged (row: Row | undefined): boolean {
  const m = row === undefined ? undefined : median(row.runs)
  if (row === undefined || m === undefined) return false
  const errors = rowErrors(row)
  const { others, stolen } = noise(m)
  return errors.status > 0 || errors.socket > 0 || others !== undefined || stolen !== undefined
}

function compare (pathA: string, a: BenchResults, pathB: string, b: BenchResults): string[] {
  const names = [...new Set([...a.rows, ...b.rows].map((row) => row.name))]
  const body = names.map((name) => {
    const rowA = a.rows.find((row) => row.name === name)
    const rowB = b.rows.find((row) => row.name === name)
    const ma = rowA === undefined ? undefined : median(rowA.runs)?.result
    const mb = rowB === undefined ? undefined : median(rowB.runs)?.result
    const both = ma !== undefined && mb !== undefined
    return [
      flagged(rowA) || flagged(rowB) ? `${name} ⚠` : name,
      ma === undefined ? '–' : int(rps(ma)),
      mb === undefined ? '–' : int(rps(mb)),
      both ? change(rps(ma), rps(mb)) : '–',
      ma === undefined ? '–' : ms(ma.p99Us),
      mb === undefined ? '–' : ms(mb.p99Us),
      both ? change(ma.p99Us, mb.p99Us) : '–'
    ]
  })
  const differ = differences(a, b)
  return [
    '# Plant Store benchmark: B against A',
    '',
    describe('A', pathA, a),
    describe('B', pathB, b),
    ...(differ.length === 0 ? [] : [`- **⚠ the runs differ in: ${differ.join('; ')}**`]),
    '',
    table(['scenario', 'requests/s A', 'requests/s B', 'change', 'p99 ms A', 'p99 ms B', 'change'], body),
    '',
    'change: (B − A) / A; more requests/s is better, a lower p99 is better. ⚠: a row with errors or a noisy run in A or B ' +
      '(see each file\'s own report). –: not measured (skipped, failed or not selected).'
  ]
}

function main (args: string[]): number {
  if (args.length < 1 || args.length > 2) {
    process.stderr.write('usage: npx tsx bench/report.ts <results.json> [<other results.json>]\n')
    return 2
  }
  const [a, b] = args.map(readResults)
  console.log((b === undefined ? render(a).lines : compare(args[0], a, args[1], b)).join('\n'))
  return 0
}

try {
  process.exitCode = main(process.argv.slice(2))
} catch (err) {
  process.stderr.write(`report: ${(err as Error).message}\n`)
  process.exitCode = 2
}
