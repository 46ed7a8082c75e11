import { execFile, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import t from 'tap'
import { Env } from '../../schemas/env.ts'
import { freePort } from '../helpers/free-port.ts'
import { testToken, writeTokens } from '../helpers/tokens.ts'
import { retryUntil } from '../helpers/wait.ts'

// deploy/plant-store.service, the unit docs/production.md gives: shown there as it is, valid
// for systemd-analyze, and its commands doing what it says: ExecStart starts the service,
// ExecReload reloads its tokens, and a stop ends it before TimeoutStopSec.

const UNIT = readFileSync('deploy/plant-store.service', 'utf8')
const RELEASE = '/opt/plant-store'

/** The unit's values of a key, in order. */
const values = (key: string): string[] => [...UNIT.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map(([, value]) => value)

function systemdAnalyze (): string | undefined {
  try {
    execFileSync('systemd-analyze', ['--version'], { stdio: 'ignore' })
    return undefined
  } catch {
    return 'systemd-analyze is not installed (Debian: apt-get install systemd)'
  }
}

t.test('docs/production.md shows the unit as deploy/plant-store.service holds it', async (t) => {
  t.match(readFileSync('docs/production.md', 'utf8'), `\`\`\`ini\n${UNIT}\`\`\``)
})

t.test('the unit stops within its grace: TimeoutStopSec is longer than SHUTDOWN_DELAY_MS and SHUTDOWN_GRACE_MS by default', async (t) => {
  const [timeout] = values('TimeoutStopSec').map(Number)
  const graceS = (Env.properties.SHUTDOWN_GRACE_MS.default + Env.properties.SHUTDOWN_DELAY_MS.default) / 1000
  t.ok(timeout > graceS, `TimeoutStopSec=${timeout} > ${graceS}`)
  t.same(values('ExecReload'), ['/bin/kill -HUP $MAINPID'])
  // What `npm start` runs, without npm in between (npm does not pass SIGHUP on).
  const start = JSON.parse(readFileSync('package.json', 'utf8')).scripts.start.replace(/^exec node /, `${RELEASE}/node_modules/.bin/node `)
  t.same(values('ExecStart'), [start])
})

t.test('systemd-analyze verify finds nothing to say of the unit', { skip: systemdAnalyze() }, async (t) => {
  // In this checkout rather than /opt: verify looks for the program ExecStart names.
  const file = `${t.testdir()}/plant-store.service`
  writeFileSync(file, UNIT.replaceAll(RELEASE, process.cwd()))
  const { stdout, stderr } = await promisify(execFile)('systemd-analyze', ['verify', file])
  t.equal(`${stdout}${stderr}`, '')
})

t.test("the unit's commands: ExecStart serves, ExecReload reloads the tokens, a stop ends it within TimeoutStopSec", async (t) => {
  const dir = t.testdir()
  const tokens = writeTokens(`${dir}/tokens.json`, [testToken('first', ['plants:read'])])
  const port = await freePort()
  const [command, ...args] = values('ExecStart')[0].replaceAll(RELEASE, process.cwd()).split(' ')
  // Run as systemd runs it: no npm, no tap options in NODE_OPTIONS, the built service (npm ci builds it).
  const child = spawn('env', ['-u', 'NODE_OPTIONS', '-u', 'NODE_V8_COVERAGE', command, ...args], {
    env: { ...process.env, PORT: String(port), DATABASE_URL: `sqlite:${dir}/plants.db`, API_TOKENS: '', API_TOKENS_FILE: tokens },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const lines: string[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(line))
  const logged = async (what: RegExp) => (await retryUntil(async () => lines.some((line) => what.test(line)), (found) => found, 10_000, 20)).value
  t.ok(await logged(/listening on/), 'it serves')
  const fresh = testToken('second', ['plants:read'])
  writeTokens(tokens, [fresh])
  execFileSync('/bin/sh', ['-c', values('ExecReload')[0].replace('$MAINPID', String(child.pid))])
  t.ok(await logged(/API_TOKENS_FILE reloaded/), 'ExecReload: the tokens file read again')
  const answer = await fetch(`http://127.0.0.1:${port}/plants`, { headers: { authorization: `Bearer ${fresh.value}` } })
  t.equal(answer.status, 200, 'the new token works')
  const started = Date.now()
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0, 'a graceful stop')
  t.ok(Date.now() - started < Number(values('TimeoutStopSec')[0]) * 1000, 'within TimeoutStopSec')
})
