import { spawn } from 'node:child_process'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import type { StoredPlant } from '../../src/store/store.ts'
import { AUTH } from './app.ts'
import { NODE_ARGS } from './server.ts'

const SCRIPT = new URL('../../scripts/store/main.ts', import.meta.url).pathname

export interface CommandResult {
  code: number | null
  stdout: string
  stderr: string
}

/** `npm run store -- <args>`, run from its TypeScript source as tap runs the tests, instead of a build. */
export async function storeCommand (args: string[], env: NodeJS.ProcessEnv = {}, argv = [process.execPath, ...NODE_ARGS, SCRIPT, ...args]): Promise<CommandResult> {
  const child = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...env } })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const [code] = await once(child, 'exit')
  return { code, stdout, stderr }
}

/** The command run under `script`, its stdout and stderr a terminal: what it wrote there, both together. */
export async function storeCommandOnTerminal (args: string[]): Promise<CommandResult> {
  const quote = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`
  const line = [process.execPath, ...NODE_ARGS, SCRIPT, ...args].map(quote).join(' ')
  return await storeCommand([], {}, ['script', '--quiet', '--return', '--command', line, '/dev/null'])
}

/** The plant checksums a copy's report prints: the source's, then the destination's. */
export function checksums (report: string): string[] {
  return [...report.matchAll(/sha256:[0-9a-f]{64}/g)].map(([checksum]) => checksum)
}

/** A number the report prints after `words`. */
export function reported (report: string, words: string): number {
  const found = new RegExp(`${words} (\\d+)`).exec(report)
  if (found === null) throw new Error(`no "${words} <n>" in: ${report}`)
  return Number(found[1])
}

/** JSON with every integer id read exactly (a bigint). */
export function exactJson<T> (text: string): T {
  return JSON.parse(text, (key, value, context?: { source?: string }) =>
    key === 'id' && typeof value === 'number' ? BigInt(context!.source!) : value) as T
}

/** Every plant the app serves on GET /plants, ascending by id, ids exact. */
export async function servedPlants (app: FastifyInstance): Promise<StoredPlant[]> {
  const plants: StoredPlant[] = []
  for (;;) {
    const after = plants.length === 0 ? '' : `&after=${plants.at(-1)!.id}`
    const res = await app.inject({ url: `/plants?limit=1000${after}`, headers: AUTH })
    const page = exactJson<StoredPlant[]>(res.body)
    if (page.length === 0) return plants
    plants.push(...page)
  }
}
