import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { once } from 'node:events'
import t from 'tap'
import { NODE_RANGE } from '../../src/process/project.ts'
import { unsupportedNode } from '../../src/process/supported-node.ts'
import { TOKEN } from '../helpers/app.ts'

t.test('a Node older than the oldest in the range is refused, with what to run instead; newer ones run', async (t) => {
  const range = '^22.12.0 || ^24.0.0'
  for (const version of ['v20.20.2', 'v18.0.0', 'v22.11.9', 'v21.99.0']) {
    t.match(unsupportedNode(version, range), `Node ${version} is older than the service supports (${range}); run it with the Node that npm ci installs`, version)
  }
  for (const version of ['v22.12.0', 'v22.20.1', 'v23.0.0', 'v24.0.0', 'v24.21.0', 'v26.1.0']) {
    t.equal(unsupportedNode(version, range), undefined, version)
  }
  t.equal(unsupportedNode(process.version, NODE_RANGE), undefined, `the test's own Node, ${process.version}, within package.json's ${NODE_RANGE}`)
})

// The machines' own Node (Debian's, or the one a base image brings) is often older than
// the project's: started with it, the service died of a segmentation fault without a word.
const SYSTEM_NODE = '/usr/bin/node'
// Not the options of the suite's Node: on Node 22, NODE_OPTIONS holds the flag that strips
// TypeScript's types, which an older Node refuses. An option of its own, as tap's process
// tracking replaces an empty NODE_OPTIONS with the suite's.
const SYSTEM_ENV = { ...process.env, NODE_OPTIONS: '--no-warnings' }
const systemVersion = existsSync(SYSTEM_NODE) ? execFileSync(SYSTEM_NODE, ['--version'], { encoding: 'utf8', env: SYSTEM_ENV }).trim() : undefined
const tooOld = systemVersion !== undefined && unsupportedNode(systemVersion, NODE_RANGE) !== undefined

t.test('started with an unsupported Node, the service exits 1 and says why', {
  skip: tooOld ? false : `${SYSTEM_NODE} is ${systemVersion ?? 'absent'}, not older than ${NODE_RANGE}`
}, async (t) => {
  // Without tap's coverage: an old Node's account of the modules it loaded and never ran
  // spoiled the merged coverage of the whole suite. That Node cannot strip TypeScript's
  // types itself, as the suite's does: tsx transpiles the source for it.
  const server = new URL('../../src/server.ts', import.meta.url).pathname
  const child = spawn(SYSTEM_NODE, ['--import=tsx', server], {
    env: { ...SYSTEM_ENV, _TAPJS_PROCESSINFO_COVERAGE_: '0', API_TOKENS: TOKEN, PORT: '0', DATABASE_URL: 'memory:' },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const [code, signal] = await once(child, 'exit')
  t.same({ code, signal }, { code: 1, signal: null }, 'exit 1, not a crash')
  t.match(stderr, `plant-store: cannot start: Node ${systemVersion} is older than the service supports (${NODE_RANGE})`)
})
