/**
 * The bench's markdown, from a results file's content: the header, the scenario table
 * with its CPU columns, per-row details and the flags for invalid or noisy rows, the
 * footprint table. bench/run.ts prints it as it goes, bench/report.ts later from the
 * JSON; each section also says whether its rows are valid (the exit code).
 */
import type { CpuSample } from './machine.ts'
import { errorSummary, median, rowErrors, rps, socketErrors, type BenchResults, type Footprint, type LoadResult, type Measured } from './results.ts'

/** Above this share of a core used by processes not ours, a row is flagged as noisy. */
const NOISE = 0.1

export interface Section { lines: string[], valid: boolean }

export const int = (n: number): string => Math.round(n).toLocaleString('en-US')
export const ms = (us: number): string => (us / 1000).toFixed(2)
const pct = (x: number): string => `${Math.round(x * 100)}%`
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`

export function table (header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n')
}

/** What makes a run noisy, when something does: other processes' share of a core, the hypervisor's of the server's core. */
export function noise (m: Measured): { others?: number, stolen?: number } {
  const stolen = m.cpu.core0 === undefined ? 0 : m.cpu.core0.steal / m.cpu.core0.total
  return { others: m.cpu.others > NOISE ? m.cpu.others : undefined, stolen: stolen > NOISE / 2 ? stolen : undefined }
}

export function header (r: BenchResults): string[] {
  const { machine, load } = r
  return [
    '# Plant Store benchmark',
    '',
    `- date: ${r.date}`,
    `- machine: ${machine.cpuModel}, ${machine.cpuCount} cores; node ${r.node}; Linux ${machine.kernel}`,
    `- load generator: ${load.generator}${load.version === '' ? '' : ` ${load.version}`}, ${load.connections} connections${load.generator === 'wrk' ? `, ${load.threads} threads` : ''}, warm-up ${load.warmupSeconds} s, measured ${load.seconds} s${load.runs > 1 ? ` × ${load.runs} (median shown)` : ''}`,
    machine.pinned
      ? '- taskset: server pinned to core 0, load generator to core 1'
      : `- taskset: ${machine.tasksetFound ? `only ${machine.cpuCount} core` : 'not found'}, processes NOT pinned (server and load generator share the cores)`,
    `- load average before the bench: ${machine.loadAverage.toFixed(2)}${machine.loadAverage > 0.5 ? ' **⚠ the machine is not idle: other processes compete for the cores and the numbers will be noisy**' : ''}`,
    `- services as shipped: LOG_LEVEL=info to a file, bearer auth; temp dir ${r.tempDir} (${r.filesystem})`,
    `- POST /plants, a never-used id per request, body ${r.createBody}`,
    ''
  ]
}

export function scenarioSection (r: BenchResults): Section {
  const out: string[] = []
  let valid = true
  const shown = new Map(r.rows.map((row) => [row.name, median(row.runs)]))
  const body = r.rows.map((row) => {
    const m = shown.get(row.name)
    if (m === undefined) {
      if (!(row.error ?? '').startsWith('skipped')) valid = false
      const error = row.error ?? 'failed'
      return [row.name, error.length > 60 ? `${error.slice(0, 59)}… (below)` : error, '', '', '', '', '', '', '', '', '', '']
    }
    const result = m.result
    const to = row.compareTo ?? 'baseline'
    const reference = shown.get(to)?.result
    const errors = rowErrors(row)
    const bad = errors.status > 0 || errors.socket > 0
    if (bad) valid = false
    return [
      bad ? `**${row.name} ⚠ INVALID**` : row.name,
      int(rps(result)),
      ms(result.p50Us),
      ms(result.p99Us),
      reference === undefined || rps(reference) === 0 ? '–' : `${(rps(result) / rps(reference)).toFixed(2)}×`,
      to === row.name ? 'itself' : to,
      errors.status > 0 ? `**${int(errors.status)}**` : '0',
      errors.socket > 0 ? `**${int(errors.socket)}**` : '0',
      pct(m.cpu.server),
      pct(m.cpu.loadGenerator),
      pct(m.cpu.kernel),
      pct(m.cpu.others),
      r.node // every server runs on the runner's own Node (process.execPath)
    ]
  })
  out.push(table(['scenario', 'requests/s', 'p50 ms', 'p99 ms', 'ratio', 'to', 'non-2xx', 'socket errors', 'server CPU', 'load gen CPU', 'kernel CPU', 'other processes', 'node'], body))
  out.push('')
  out.push('CPU columns: share of one core over the measured run (the machine has ' + String(r.machine.cpuCount) + '). kernel: interrupts, softirqs and kernel threads (loopback TCP, disk writeback, journal), charged to no process. other processes: anything else running on the machine; above ' + pct(NOISE) + ' the row is flagged as noisy.')
  out.push('')
  for (const row of r.rows) {
    const m = shown.get(row.name)
    if (m === undefined) {
      if (row.error !== undefined) out.push(`- ${row.name}: ${row.error}`)
      continue
    }
    const result = m.result
    const core = (name: string, c: CpuSample | undefined): string => c === undefined
      ? ''
      : `${name} busy ${pct(c.busy / c.total)}, iowait ${pct(c.iowait / c.total)}${c.steal / c.total >= 0.01 ? `, stolen by the hypervisor ${pct(c.steal / c.total)}` : ''}`
    const parts = [
      `${int(result.requests)} requests in ${(result.durationUs / 1e6).toFixed(1)} s`,
      `max ${ms(result.maxUs)} ms`,
      `RSS ${mb(m.rssKb * 1024)}`,
      m.logBytesPerRequest === undefined || m.logBytesPerRequest === 0 ? 'no log' : `log ${Math.round(m.logBytesPerRequest)} B/request`,
      m.webhooks === undefined ? '' : `webhook deliveries: ${int(m.webhooks.received)} received during the run, ${int(m.webhooks.pending)} pending after it`,
      r.machine.pinned ? core('core 0 (server)', m.cpu.core0) : '',
      r.machine.pinned ? core('core 1 (load gen)', m.cpu.core1) : '',
      row.runs.length > 1 ? `runs ${row.runs.map((run) => int(rps(run.result))).join(', ')} requests/s` : ''
    ].filter((p) => p !== '')
    out.push(`- ${row.name}: ${parts.join('; ')}`)
  }
  for (const row of r.rows) {
    const m = shown.get(row.name)
    if (m === undefined) continue
    for (const [i, run] of row.runs.entries()) {
      if (run.result.statusErrors === 0 && socketErrors(run.result) === 0) continue
      out.push('')
      out.push(`**!!! ${row.name}${row.runs.length > 1 ? ` run ${i + 1}` : ''} IS NOT A VALID MEASUREMENT: ${errorSummary(run.result)}.**`)
    }
    if (row.loggedError !== undefined) out.push(`    first failure the service logged: ${row.loggedError}`)
    const { others, stolen } = noise(m)
    if (others !== undefined) {
      out.push('')
      out.push(`**⚠ ${row.name}: other processes used ${pct(others)} of a core during the run: the row is noisy, run again on a quiet machine.**`)
    }
    if (stolen !== undefined) {
      out.push('')
      out.push(`**⚠ ${row.name}: the hypervisor took ${pct(stolen)} of the server's core: the row is noisy.**`)
    }
  }
  return { lines: out, valid }
}

function footprintTable (count: number, results: Footprint[]): Section {
  let valid = true
  const body = results.map((f) => {
    if (f.error !== undefined || f.fill === undefined) {
      valid = false
      return [f.store, `FAILED: ${f.error ?? 'no fill'}`, '', '', '', '', '', '']
    }
    if (f.rows !== undefined && f.rows !== count) valid = false
    const disk = f.disk === undefined ? undefined : f.disk.db + f.disk.wal + f.disk.shm
    return [
      f.store,
      `${f.fill.seconds.toFixed(1)} s (${int(count / f.fill.seconds)}/s)`,
      f.rows === undefined ? 'not countable' : f.rows === count ? int(f.rows) : `**${int(f.rows)} ⚠ expected ${int(count)}**`,
      f.rssEmptyKb === undefined ? '–' : mb(f.rssEmptyKb * 1024),
      f.rssKb === undefined ? '–' : mb(f.rssKb * 1024),
      f.rssKb === undefined || f.rssEmptyKb === undefined ? '–' : `${int((f.rssKb - f.rssEmptyKb) * 1024 / count)} B`,
      disk === undefined ? '–' : `${mb(disk)} (db ${mb(f.disk!.db)}, wal ${mb(f.disk!.wal)}, shm ${mb(f.disk!.shm)})`,
      disk === undefined ? '–' : `${int(disk / count)} B`
    ]
  })
  const out = [table(['store', 'fill through POST /plants', 'rows stored', 'RSS empty', 'RSS filled', 'RSS growth per plant', 'on disk', 'disk per plant'], body), '']
  for (const f of results) {
    if (f.hwmKb !== undefined) out.push(`- ${f.store}: peak RSS during the fill ${mb(f.hwmKb * 1024)}; fill p50 ${ms(f.fill!.p50Us)} ms, p99 ${ms(f.fill!.p99Us)} ms`)
  }
  return { lines: out, valid }
}

/** Each request's rates on the small store and on the filled one: flat with size when the change of the mean is small. */
function sizeTable (count: number, f: Footprint): string[] {
  if (f.rates === undefined || f.smallCount === undefined) return []
  const runs = (r: LoadResult[] | LoadResult): LoadResult[] => Array.isArray(r) ? r : [r]
  const mean = (r: LoadResult[]): number => r.reduce((sum, result) => sum + rps(result), 0) / r.length
  const cell = (r: LoadResult[]): string => r.length === 1
    ? `${int(rps(r[0]))} (p99 ${ms(r[0].p99Us)} ms)`
    : `${r.map((result) => int(rps(result))).join(', ')}: ${int(mean(r))} (p99 ${r.map((result) => ms(result.p99Us)).join(', ')} ms)`
  const body = f.rates.map(({ request, small, filled }) => {
    const [a, b] = [mean(runs(small)), mean(runs(filled))]
    return [`\`${request}\``, cell(runs(small)), cell(runs(filled)), `${b >= a ? '+' : ''}${(100 * (b / a - 1)).toFixed(1)}%`]
  })
  const rounds = runs(f.rates[0].small).length
  const how = rounds === 1 ? 'in this run' : `in ${rounds} rounds taking turns, each run and the mean`
  return ['', `Requests/s of ${f.store} at ${int(f.smallCount)} and at ${int(count)} plants, ${how}:`, '',
    table(['request', `at ${int(f.smallCount)}`, `at ${int(count)}`, 'change'], body)]
}

export function footprintSection (r: BenchResults): Section {
  if (r.footprint === undefined) return { lines: ['', '(footprint section skipped: BENCH_SKIP_MILLION=1)'], valid: true }
  const { count, stores } = r.footprint
  const section = footprintTable(count, stores)
  return { lines: ['', `## ${int(count)} plants`, '', ...section.lines, ...stores.flatMap((f) => sizeTable(count, f))], valid: section.valid }
}

export function closing (totalSeconds: number | undefined, valid: boolean): string[] {
  const out = totalSeconds === undefined ? [] : ['', `total bench time: ${totalSeconds.toFixed(0)} s`]
  return valid ? out : [...out, '', '**SOME ROWS ARE INVALID OR FAILED: see above.**']
}

/** The whole markdown of a results file, as bench/run.ts printed it during the run. */
export function render (r: BenchResults): Section {
  const rows = scenarioSection(r)
  const footprint = footprintSection(r)
  const valid = rows.valid && footprint.valid
  return { lines: [...header(r), ...rows.lines, ...footprint.lines, ...closing(r.totalSeconds, valid)], valid }
}
