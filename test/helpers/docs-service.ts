import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { NODE_ARGS, startServer, type RunningServer } from './server.ts'

// The service the docs tell a reader to start for their examples: README.md's one command
// that starts from an empty store and keeps the development token, `… npm run start:empty`,
// with the settings it names. Run as that npm script runs it (scripts/empty-store.ts, then
// the service), from source as tap runs the tests, on a free port instead of 3000.

const EMPTY_STORE = new URL('../../scripts/empty-store.ts', import.meta.url).pathname
const START = /^((?:[A-Z_]+=\S+ )*)npm run start:empty$/

/** The settings README.md's start command sets, by name; it is in a ```console block, once. */
export function documentedSettings (): Record<string, string> {
  const blocks = [...readFileSync('README.md', 'utf8').matchAll(/^```console\n([\s\S]*?)^```$/gm)].map(([, block]) => block)
  const commands = blocks.flatMap((block) => block.split('\n')).map((line) => START.exec(line.replace(/\s+#.*$/, '')))
    .filter((found) => found !== null)
  if (commands.length !== 1) throw new Error(`README.md must show the command that starts from an empty store once, in a console block; found ${commands.length}`)
  return Object.fromEntries(commands[0][1].trim().split(/\s+/).filter((word) => word !== '').map((word) => word.split('=', 2)))
}

/**
 * Starts the service as the docs say, its SQLite store at `<dir>/data/plants.db`: emptied
 * first, its development token kept. Returns the service and that token.
 */
export async function startAsDocumented (t: Test, dir: string): Promise<{ server: RunningServer, token: string }> {
  const env = { ...documentedSettings(), API_TOKENS: '', API_TOKENS_FILE: '', DATABASE_URL: `sqlite:${dir}/data/plants.db` }
  await promisify(execFile)(process.execPath, [...NODE_ARGS, EMPTY_STORE], { env: { ...process.env, ...env } })
  const server = await startServer(t, env)
  return { server, token: readFileSync(`${dir}/data/plants.db.token`, 'utf8').trim() }
}
