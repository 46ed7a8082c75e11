import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import t from 'tap'
import { freePort } from '../helpers/free-port.ts'
import { startServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'

// The docs' address: the service under test listens on a free port instead.
const DOCS_URL = 'http://127.0.0.1:3000'
const FILES = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)]

interface Step {
  command: string
  /** The `# ` lines under the command: what it prints, `…` standing for anything. */
  shown: string[]
}

/** Every ```sh block of a file, command by command; other blocks (```console, ```text) are not run. */
function steps (text: string): Step[] {
  const steps: Step[] = []
  for (const [, block] of text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    let continued = false
    for (const line of block.split('\n').filter((line) => line !== '')) {
      if (line.startsWith('# ')) steps.at(-1)!.shown.push(line.slice(2))
      else if (continued) steps.at(-1)!.command += `\n${line}`
      else steps.push({ command: line, shown: [] })
      continued = line.endsWith('\\')
    }
  }
  return steps
}

/** One bash for a whole file, as a reader's terminal: a variable one command sets is there for the next. */
function shell (cwd: string, env: NodeJS.ProcessEnv): { run: (command: string) => Promise<string>, child: ChildProcess } {
  const child = spawn('bash', ['--noprofile', '--norc'], { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'ignore'] })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  let count = 0
  const run = async (command: string): Promise<string> => {
    const end = `\n--- step ${++count} done ---\n`
    child.stdin!.write(`${command}\nprintf '${end.replaceAll('\n', '\\n')}'\n`)
    while (!output.includes(end)) await once(child.stdout!, 'data')
    const printed = output.slice(0, output.indexOf(end))
    output = output.slice(output.indexOf(end) + end.length)
    return printed
  }
  return { run, child }
}

function pattern (shown: string[]): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`^${shown.join('\n').split('…').map(literal).join('[\\s\\S]*?')}$`)
}

t.test('README.md shows what its examples print, and no block escapes the run by its language', async (t) => {
  t.ok(steps(readFileSync('README.md', 'utf8')).filter((step) => step.shown.length > 0).length >= 10)
  // A ```bash or ```shell block would silently not run: only sh runs, the rest say what they are.
  const known = new Set(['sh', 'console', 'text', 'json', 'js', 'ts', 'nginx', 'yaml'])
  for (const file of FILES) {
    const fences = [...readFileSync(file, 'utf8').matchAll(/^```(\S*)$/gm)].map(([, language]) => language)
    const openers = fences.filter((_, i) => i % 2 === 0)
    t.same(openers.filter((language) => !known.has(language)), [], `${file}: every block names one of ${[...known].join(', ')}`)
  }
})

// curl is a prerequisite of the tests, as the examples use it (.ci/run installs it).
for (const file of FILES) {
  const fileSteps = steps(readFileSync(file, 'utf8'))
  if (fileSteps.length === 0) continue
  t.test(`the sh examples of ${file} print what it shows, run in order in one shell on a fresh start`, async (t) => {
    // The default setup: a SQLite database and its development token in the working directory.
    const dir = t.testdir()
    const server = await startServer(t, { API_TOKENS: '', DATABASE_URL: `sqlite:${dir}/data/plants.db`, WEBHOOK_ALLOW_PRIVATE: 'true' })
    // The README sets TOKEN itself, from the token file, as a reader does.
    const token = readFileSync(`${dir}/data/plants.db.token`, 'utf8').trim()
    const { run, child } = shell(dir, file === 'README.md' ? {} : { TOKEN: token })
    t.teardown(() => { child.kill() })
    for (const { command, shown } of fileSteps) {
      const printed = await run(command.replaceAll(DOCS_URL, server.url))
      t.match(printed.replaceAll('\r\n', '\n').replace(/\n$/, ''), pattern(shown.map((line) => line.replaceAll(DOCS_URL, server.url))), command)
    }
  })
}

t.test('the receiver of docs/webhooks.md verifies a delivery and reads its id exactly', async (t) => {
  const receiver = /^```js\n(\/\/ receiver\.mjs[\s\S]*?)^```$/m.exec(readFileSync('docs/webhooks.md', 'utf8'))
  if (receiver === null) throw new Error('docs/webhooks.md has no ```js block starting // receiver.mjs')
  // In the project's tree, as the docs have it: standardwebhooks resolves from node_modules.
  const dir = t.testdir()
  writeFileSync(`${dir}/receiver.mjs`, receiver[1])
  const server = await startServer(t, { API_TOKENS: 'a-token-of-sixteen-chars', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '100' })
  const port = await freePort()
  const subscribed = await server.request('POST', '/webhooks', { token: 'a-token-of-sixteen-chars', body: { url: `http://127.0.0.1:${port}/` } })
  t.equal(subscribed.statusCode, 201)
  const child = spawn(process.execPath, [`${dir}/receiver.mjs`], { env: { ...process.env, PORT: String(port), WEBHOOK_SECRET: subscribed.json().secret }, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill() })
  const lines: string[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(line))
  const created = await server.request('POST', '/plants', { token: 'a-token-of-sixteen-chars', body: '{"id": 9007199254740993, "name": "Monstera", "tag": "tropical"}' })
  t.equal(created.statusCode, 200)
  // The first attempt may come before the receiver listens; the retry finds it.
  await retryUntil(async () => lines.length, (count) => count > 0, 20_000)
  t.same(lines, ["new plant { id: 9007199254740993n, name: 'Monstera', tag: 'tropical' }"])
})
