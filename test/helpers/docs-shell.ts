import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'

// A reader's terminal, as the docs' sh blocks expect it: one bash in the project's directory,
// where `npm run` finds the project, `data/` is the development store's and
// `node_modules/.bin/node dist/src/server.js` starts the service. Here the directory is the
// test's own, with the project's package.json, node_modules and dist linked into it: npm takes
// it for the project, and what the docs write into data/ stays the test's. A reader's
// `npm run store` finds the development store by default; this one finds the test's, as
// DATABASE_URL names it. The environment is a reader's too: none of the variables of the npm
// that runs the tests, no node_modules/.bin on PATH, so that `node` is the machine's, and none
// of the options tap adds to every child's NODE_OPTIONS (its coverage would count the build's
// functions again, through its source maps, as functions of their own that no test called).

const PROJECT = new URL('../..', import.meta.url).pathname
const LINKED = ['package.json', 'node_modules', 'dist']

export interface Shell {
  /** Runs a command as a reader types it; resolves with what it printed and its exit status. */
  run: (command: string) => Promise<{ printed: string, status: number }>
}

/**
 * One bash in `dir`, which becomes the project's directory for npm, its store
 * `<dir>/data/plants.db`: a variable one command sets is there for the next, and what a
 * command writes to stderr is printed as what it writes to stdout. Its background jobs (a
 * service a doc starts with `&`) end with it, when the test ends.
 */
export function readersShell (t: Test, dir: string): Shell {
  for (const name of LINKED) symlinkSync(join(PROJECT, name), join(dir, name))
  mkdirSync(join(dir, 'tmp')) // mktemp's, inside the test's directory
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && name !== 'INIT_CWD'))
  env.PATH = (env.PATH ?? '').split(':').filter((path) => !path.includes('node_modules')).join(':')
  Object.assign(env, { TOKEN: '', DATABASE_URL: `sqlite:${dir}/data/plants.db`, TMPDIR: join(dir, 'tmp') })
  // A process group of its own, so that the teardown ends the jobs it started too.
  const child = spawn('bash', ['--noprofile', '--norc'], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true })
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGTERM')
    } catch {} // the group is gone already
  })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stdin!.write('exec 2>&1; unset NODE_OPTIONS NODE_V8_COVERAGE\n')
  let count = 0
  const run = async (command: string): Promise<{ printed: string, status: number }> => {
    const end = new RegExp(`\n--- step ${++count} done: (\\d+) ---\n`)
    child.stdin!.write(`${command}\nprintf '\\n--- step ${count} done: %d ---\\n' $?\n`)
    while (!end.test(output)) await once(child.stdout!, 'data')
    const found = end.exec(output)!
    const printed = output.slice(0, found.index)
    output = output.slice(found.index + found[0].length)
    return { printed, status: Number(found[1]) }
  }
  return { run }
}

/**
 * The sources (src/, schemas/, scripts/) whose build in dist/ is missing or older than they
 * are: the docs run dist/, as a reader does, so a stale build would test the wrong code.
 */
export function staleBuild (): string[] {
  const modified = (path: string): number => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? -1
  return ['src', 'schemas', 'scripts']
    .flatMap((folder) => readdirSync(join(PROJECT, folder), { recursive: true, encoding: 'utf8' }).map((name) => join(folder, name)))
    .filter((source) => source.endsWith('.ts') && !source.endsWith('.d.ts'))
    .filter((source) => modified(join(PROJECT, 'dist', source.replace(/\.ts$/, '.js'))) < modified(join(PROJECT, source)))
}
