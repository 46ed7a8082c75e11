/**
 * Measuring one scenario: its server started in a fresh dir, the prefill, the warm-up
 * (discarded), then BENCH_RUNS measured runs, each with the CPU accounting, the
 * server's RSS and the log bytes per request around it. Also the fill, which the
 * prefill and the footprint section share.
 */
import { randomInt } from 'node:crypto'
import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { LoadGenerator, LoadOptions } from './load.ts'
import { cpuUse, memoryKb, snapshot } from './machine.ts'
import { stop } from './processes.ts'
import { errorSummary, socketErrors, type LoadResult, type Row } from './results.ts'
import { createPlant, type Scenario } from './scenarios.ts'
import { firstLoggedError, notableLogLines, startServer, tail, type Server } from './server.ts'
import { fail, settings } from './settings.ts'
import { pendingDeliveries, startReceiver, subscribe } from './webhook.ts'

// Each run takes ids from its own block, so a measured run never repeats a warm-up's
// id (which would be a cheap retry, not a create). The first block is random so that
// a store that outlives the bench (a PostgreSQL database) gets fresh ids next time
// too. Blocks stay below 2^53, where the Lua doubles in wrk stop being exact; ids
// below the first block are for prefills.
const ID_BLOCK = 1e9
let nextBlock = randomInt(1, 8_000_000)

/** A block of ids no run has sent yet, for creates that must really insert. */
export function idBlock (): number {
  return ID_BLOCK * nextBlock++
}

/** Creates plants base..base+total-1, each once; fails on any error or if the server dies. */
export async function fill (load: LoadGenerator, server: Server, total: number, base: number): Promise<LoadResult & { seconds: number }> {
  const died = new AbortController()
  const onExit = (): void => died.abort()
  server.child.once('exit', onExit)
  const started = process.hrtime.bigint()
  let result: LoadResult
  try {
    result = await load.run({ port: server.port, request: createPlant, base, total, abort: died.signal })
  } finally {
    server.child.off('exit', onExit)
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  if (died.signal.aborted) fail(`the server exited (${server.child.exitCode ?? server.child.signalCode}) during the fill:\n${tail(server.errPath)}\n${notableLogLines(server.logPath)}`)
  if (result.statusErrors + socketErrors(result) > 0) {
    fail(`the fill had errors: ${errorSummary(result)}`)
  }
  return { ...result, seconds }
}

/** A scenario's row before any run: what the results file says of the scenario itself. */
export function emptyRow (scenario: Scenario): Row {
  return { name: scenario.name, compareTo: scenario.compareTo, request: scenario.request, prefill: scenario.prefill, runs: [] }
}

export async function runScenario (scenario: Scenario, load: LoadGenerator, root: string): Promise<Row> {
  const row = emptyRow(scenario)
  const skipped = scenario.skip?.()
  if (skipped !== undefined) return { ...row, error: `skipped: ${skipped}` }
  const dir = join(root, scenario.name.replace(/[^\w.-]+/g, '_'))
  mkdirSync(dir, { recursive: true })
  process.stderr.write(`bench: ${scenario.name}\n`)
  const server = await startServer(scenario.server, dir)
  const receiver = scenario.webhook === true ? await startReceiver() : undefined
  try {
    const prefilled = scenario.request.ids === 'prefilled'
    if (prefilled && scenario.prefill === undefined) fail(`${scenario.name}: ids 'prefilled' needs a prefill count`)
    if (scenario.prefill !== undefined) {
      process.stderr.write(`  prefill: ${scenario.prefill.toLocaleString('en-US')} plants\n`)
      await fill(load, server, scenario.prefill, 1)
    }
    if (receiver !== undefined) await subscribe(server.port, receiver.url)
    const ids = (): Pick<LoadOptions, 'base' | 'cycle'> => prefilled ? { base: 1, cycle: scenario.prefill } : { base: idBlock() }
    if (settings.warmupSeconds > 0) {
      process.stderr.write(`  warm-up: ${settings.warmupSeconds} s\n`)
      await load.run({ port: server.port, request: scenario.request, seconds: settings.warmupSeconds, ...ids() })
    }
    for (let i = 1; i <= settings.runs; i++) {
      process.stderr.write(`  measured: ${settings.seconds} s${settings.runs > 1 ? ` (${i} of ${settings.runs})` : ''}\n`)
      const logBefore = statSync(server.logPath).size
      const receivedBefore = receiver?.received() ?? 0
      const before = snapshot(server.pid)
      const result = await load.run({ port: server.port, request: scenario.request, seconds: settings.seconds, ...ids() })
      const cpu = cpuUse(before, snapshot(server.pid))
      row.runs.push({
        result,
        cpu,
        rssKb: memoryKb(server.pid, 'VmRSS'),
        logBytesPerRequest: result.requests > 0 ? (statSync(server.logPath).size - logBefore) / result.requests : undefined,
        webhooks: receiver === undefined ? undefined : { pending: await pendingDeliveries(server.port), received: receiver.received() - receivedBefore }
      })
    }
    if (row.runs.some((run) => run.result.statusErrors > 0)) row.loggedError = await firstLoggedError(server.logPath)
    return row
  } finally {
    await stop(server.child)
    await receiver?.close()
  }
}
