import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { startAsDocumented } from '../helpers/docs-service.ts'

// @plant-store/client as a consumer gets it: `npm pack` of the workspace, installed from the
// tarball into a project of its own outside the repository (npm reads the registry's
// packages from its cache when it has them), and docs/client.md's example run there, as
// JavaScript and as TypeScript, against the service started as the docs say. Run on every
// Node the project supports: `npm test` on its own, and `npm run test:client` on another.

// A consumer's programs run without the options tap gives this test's processes (its loaders, its
// coverage), which it adds to every child's NODE_OPTIONS: env(1) drops them.
const execute = promisify(execFile)
const run = async (file: string, args: string[], options: { cwd?: string, env?: NodeJS.ProcessEnv } = {}) =>
  await execute('env', ['-u', 'NODE_OPTIONS', '-u', 'NODE_V8_COVERAGE', file, ...args], { ...options, env: { ...process.env, ...options.env } })
const REPOSITORY = process.cwd()
const TSC = join(REPOSITORY, 'node_modules/typescript/bin/tsc')
const TYPES_NODE = JSON.parse(readFileSync('node_modules/@types/node/package.json', 'utf8')).version

/** docs/client.md's js blocks, one program, and the lines its `// →` comments say it prints. */
const blocks = [...readFileSync('docs/client.md', 'utf8').matchAll(/^```js\n([\s\S]*?)^```$/gm)].map(([, block]) => block)
const example = blocks.join('\n')
const expected = [...example.matchAll(/\/\/ → (.*)$/gm)].map(([, line]) => line)

const outside = mkdtempSync(join(tmpdir(), 'plant-store-client-'))
t.teardown(() => rmSync(outside, { recursive: true, force: true }))
const project = join(outside, 'my-app')

t.before(async () => {
  await run('npm', ['pack', '--workspace', 'client', '--pack-destination', outside], { cwd: REPOSITORY })
  const [tarball] = readdirSync(outside).filter((name) => name.endsWith('.tgz'))
  await run('mkdir', [project])
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-app', private: true, type: 'module' }))
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(outside, tarball), `@types/node@${TYPES_NODE}`], { cwd: project })
})

t.test('the tarball holds the built client, its declarations and its README, and nothing the repository lends it', async (t) => {
  const installed = join(project, 'node_modules/@plant-store/client')
  const files = readdirSync(join(installed, 'dist'))
  t.ok(files.includes('index.js') && files.includes('index.d.ts'), 'JavaScript and declarations')
  t.same(files.filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts')), [], 'no TypeScript source')
  const { version } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
  t.match(readFileSync(join(installed, 'README.md'), 'utf8'), `Version ${version} of the Plant Store's client`)
  // What the project's node_modules holds: the client, what it declares and what that declares (and @types/node's undici-types).
  t.same(readdirSync(join(project, 'node_modules')).filter((name) => !name.startsWith('.')).sort(),
    ['@plant-store', '@types', 'openapi-fetch', 'openapi-typescript-helpers', 'undici-types'])
  t.notOk(existsSync(join(outside, 'node_modules')), 'nothing resolved from above the project')
})

t.test(`docs/client.md's example, installed, prints what the docs show: as example.mjs on Node ${process.versions.node}`, async (t) => {
  t.ok(expected.length >= 8)
  writeFileSync(join(project, 'example.mjs'), example)
  const { server, token } = await startAsDocumented(t, t.testdir())
  const { stdout } = await run(process.execPath, ['example.mjs'], { cwd: project, env: { PLANT_STORE_URL: server.url, TOKEN: token } })
  t.same(stdout.trimEnd().split('\n'), expected)
})

t.test('as example.ts: tsc checks it against the declarations, strictly, and Node runs it as it is where it strips types', async (t) => {
  writeFileSync(join(project, 'example.ts'), example)
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, types: ['node'] },
    files: ['example.ts']
  }))
  await t.resolves(run(process.execPath, [TSC, '-p', project]), 'no type error, the client\'s declarations checked too (no skipLibCheck)')
  if (process.features.typescript === false || process.features.typescript === undefined) return
  const { server, token } = await startAsDocumented(t, t.testdir())
  const { stdout } = await run(process.execPath, ['example.ts'], { cwd: project, env: { PLANT_STORE_URL: server.url, TOKEN: token } })
  t.same(stdout.trimEnd().split('\n'), expected)
})

t.test('ids at both ends of int64 go there and back exactly, through the installed client', async (t) => {
  writeFileSync(join(project, 'extremes.mjs'), `import { createPlantStoreClient } from '@plant-store/client'
const client = createPlantStoreClient({ baseUrl: process.env.PLANT_STORE_URL, token: process.env.TOKEN })
for (const id of [-9223372036854775808n, 9223372036854775807n]) {
  await client.createPlant({ id, name: String(id) })
  const { id: read } = await client.getPlant(id)
  await client.deletePlant(read)
  console.log(read === id, typeof read, read)
}
`)
  const { server, token } = await startAsDocumented(t, t.testdir())
  const { stdout } = await run(process.execPath, ['extremes.mjs'], { cwd: project, env: { PLANT_STORE_URL: server.url, TOKEN: token } })
  t.same(stdout.trimEnd().split('\n'), ['true bigint -9223372036854775808n', 'true bigint 9223372036854775807n'])
})
