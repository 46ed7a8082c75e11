import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import t from 'tap'
import { TOKEN } from './helpers/app.ts'
import { startServer } from './helpers/server.ts'

// The README's address: the service under test listens on a free port instead.
const README_URL = 'http://127.0.0.1:3000'

interface Step {
  command: string
  /** The `# ` lines under the command: what it prints, `…` standing for anything. */
  shown: string[]
}

/** The shell examples of one `## ` section of the README, command by command. */
function examples (readme: string, title: string): Step[] {
  const section = readme.split(/^## /m).find((part) => part.startsWith(`${title}\n`))
  if (section === undefined) throw new Error(`README.md has no section "## ${title}"`)
  const steps: Step[] = []
  for (const [, block] of section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
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

/** What the command prints on stdout, run by bash with the token in TOKEN, as a reader runs it. */
async function run (command: string, env: NodeJS.ProcessEnv): Promise<string> {
  return await new Promise((resolve) => {
    // An exit code is no failure here (grep finding nothing exits 1): the output says it all.
    execFile('bash', ['-c', command], { env: { ...process.env, ...env } }, (_err, stdout) => resolve(stdout))
  })
}

function pattern (shown: string[]): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`^${shown.join('\n').split('…').map(literal).join('[\\s\\S]*?')}$`)
}

// curl is a prerequisite of the tests, as the README's examples use it (.ci/run installs it).
t.test('the examples of "The API" in README.md print what it shows, run in order on a fresh start', async (t) => {
  const steps = examples(await readFile('README.md', 'utf8'), 'The API')
  t.ok(steps.filter((step) => step.shown.length > 0).length >= 5, 'the section shows what its examples print')
  const server = await startServer(t, { API_TOKENS: TOKEN })
  for (const { command, shown } of steps) {
    const printed = await run(command.replaceAll(README_URL, server.url), { TOKEN })
    t.match(printed.replaceAll('\r\n', '\n').replace(/\n$/, ''), pattern(shown), command)
  }
})
