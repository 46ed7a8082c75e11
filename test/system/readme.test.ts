import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import t from 'tap'
import { startAsDocumented } from '../helpers/docs-service.ts'
import { freePort } from '../helpers/free-port.ts'
import { startServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'

// The docs' address: the service under test listens on a free port instead.
const DOCS_URL = 'http://127.0.0.1:3000'
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

/**
 * One bash for every file, as a reader's terminal: a variable one command sets is there for
 * the next, and what a command writes to stderr is printed as what it writes to stdout.
 * `run` resolves with what a command printed and its exit status.
 */
function shell (cwd: string): { run: (command: string) => Promise<{ printed: string, status: number }>, child: ChildProcess } {
  const child = spawn('bash', ['--noprofile', '--norc'], { cwd, env: { ...process.env, TOKEN: '' }, stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stdin!.write('exec 2>&1\n')
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
  return { run, child }
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
  const dir = t.testdir()
  const { run, child } = shell(dir)
  t.teardown(() => { child.kill() })
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
// its variables ($TOKEN) carry over, and so does the development token.
const dir = t.testdir()
const { run, child } = shell(dir)
t.teardown(() => { child.kill() })
for (const file of FILES) {
  const fileSteps = steps(readFileSync(file, 'utf8'))
  if (fileSteps.length === 0) continue
  t.test(`the sh examples of ${file} print what it shows, run in order on the service as the README starts it`, async (t) => {
    const { server } = await startAsDocumented(t, dir)
    for (const { command, shown } of fileSteps) {
      const { printed, status } = await run(command.replaceAll(DOCS_URL, server.url))
      t.match(printed.replaceAll('\r\n', '\n').replace(/\n$/, ''), pattern(shown.map((line) => line.replaceAll(DOCS_URL, server.url))), command)
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
