import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import t from 'tap'
import { startAsDocumented } from '../helpers/docs-service.ts'
import { readersShell, staleBuild } from '../helpers/docs-shell.ts'
import { freePort } from '../helpers/free-port.ts'
import { startServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'

// The docs' address: the service under test listens on a free port instead, and so does
// the second service a doc starts itself, with PORT=3001.
const DOCS_URL = 'http://127.0.0.1:3000'
const SECOND_PORT = 3001
const FILES = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)]

interface Step {
  command: string
  /** The `# ` lines under the command (`#` alone, an empty one): what it prints, `…` standing for anything. */
  shown: string[]
}

/** Every ```sh block of a file, command by command; other blocks (```console, ```text) are not run. */
function steps (text: string): Step[] {
  const steps: Step[] = []
  for (const [, block] of text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    let continued = false
    for (const line of block.split('\n').filter((line) => line !== '')) {
      if (line.startsWith('# ') || line === '#') steps.at(-1)!.shown.push(line.slice(2))
      else if (continued) steps.at(-1)!.command += `\n${line}`
      else steps.push({ command: line, shown: [] })
      continued = line.endsWith('\\')
    }
  }
  return steps
}

function pattern (shown: string[]): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`^${shown.join('\n').split('…').map(literal).join('[\\s\\S]*?')}$`)
}

t.test('README.md shows what its examples print, each doc that runs examples starts from the empty store, and no block escapes the run by its language', async (t) => {
  t.ok(steps(readFileSync('README.md', 'utf8')).filter((step) => step.shown.length > 0).length >= 10)
  // A ```bash or ```shell block would silently not run: only sh runs, the rest say what they are.
  const known = new Set(['sh', 'console', 'text', 'json', 'js', 'ts', 'nginx', 'yaml', 'ini'])
  for (const file of FILES) {
    const text = readFileSync(file, 'utf8')
    const fences = [...text.matchAll(/^```(\S*)$/gm)].map(([, language]) => language)
    const openers = fences.filter((_, i) => i % 2 === 0)
    t.same(openers.filter((language) => !known.has(language)), [], `${file}: every block names one of ${[...known].join(', ')}`)
    if (file !== 'README.md' && steps(text).length > 0) t.match(text, '(../README.md#an-empty-store)', `${file} links to the command its examples start with`)
  }
})

// The test's own check: a shown line that is wrong fails the run.
t.test('a step passes only when it prints every shown line, `…` standing for any text, and exits 0', async (t) => {
  const { run } = readersShell(t, t.testdir())
  const printed = async (command: string): Promise<string> => (await run(command)).printed.replace(/\n$/, '')
  t.match(await printed('printf \'{"a":1,"b":[2]}\\n\''), pattern(['{"a":1,…}']))
  t.notMatch(await printed('printf \'{"a":1,"b":[2]}\\n\''), pattern(['{"a":2,…}']), 'a wrong value fails')
  t.notMatch(await printed('printf \'one\\ntwo\\n\''), pattern(['one']), 'a line more than shown fails')
  t.notMatch(await printed('printf \'one\\n\''), pattern(['one', 'two']), 'a line fewer than shown fails')
  t.match(await printed('printf \'a\\nb\\nc\\n\''), pattern(['a', '…', 'c']))
  t.match(await printed('ls no-such-file'), /No such file/, 'stderr is what the reader sees too')
  t.equal((await run('false')).status, 1, 'and the exit status is read')
  t.equal((await run('X=1')).status, 0)
  t.equal((await printed('echo "$X"')), '1', 'one shell from step to step')
})

// curl is a prerequisite of the tests, as the examples use it (.ci/run installs it). The
// files run one after another in one shell, each on the service started as the README says:
// its variables ($TOKEN) carry over, and so does the development token. The docs' npm
// commands run dist/, as a reader's do.
const stale = staleBuild()
if (stale.length > 0) throw new Error(`dist/ is older than ${stale.slice(0, 3).join(', ')}…: npm run build, as the docs run dist/`)
const dir = t.testdir()
const { run } = readersShell(t, dir)
const second = await freePort()
const here = (text: string, url: string): string => text.replaceAll(DOCS_URL, url)
  .replaceAll(`127.0.0.1:${SECOND_PORT}`, `127.0.0.1:${second}`).replaceAll(`PORT=${SECOND_PORT}`, `PORT=${second}`)

t.test('npm takes the shell\'s directory for the project: what the docs write stays the test\'s', async (t) => {
  t.equal((await run('npm prefix')).printed.trim(), dir)
})

for (const file of FILES) {
  const fileSteps = steps(readFileSync(file, 'utf8'))
  if (fileSteps.length === 0) continue
  t.test(`the sh examples of ${file} print what it shows, run in order on the service as the README starts it`, async (t) => {
    const { server } = await startAsDocumented(t, dir)
    for (const { command, shown } of fileSteps) {
      const { printed, status } = await run(here(command, server.url))
      t.match(printed.replaceAll('\r\n', '\n').replace(/\n$/, ''), pattern(shown.map((line) => here(line, server.url))), command)
      t.equal(status, 0, `${command}: exit status`)
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
