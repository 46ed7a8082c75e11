import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { generateSchema } from '../client/scripts/schema.ts'
import { NODE_ARGS } from './helpers/server.ts'

const COMMITTED = 'client/src/schema.ts'

t.test('client/src/schema.ts is exactly what `npm run client` makes of openapi.yaml', async (t) => {
  const dir = t.testdir()
  // The script itself, as `npm run client` runs it, writing into a directory of its own.
  await promisify(execFile)(process.execPath, [...NODE_ARGS, 'client/scripts/generate.ts', 'openapi.yaml', `${dir}/schema.ts`])
  t.equal(await readFile(`${dir}/schema.ts`, 'utf8'), await readFile(COMMITTED, 'utf8'),
    'the client drifted from the contract: run `npm run client` and commit client/src/schema.ts')
})

t.test('a change to openapi.yaml changes what is generated: a client not regenerated fails the test above', async (t) => {
  const dir = t.testdir()
  const contract = (await readFile('openapi.yaml', 'utf8')).replace('operationId: getPlant', 'operationId: readPlant')
  await writeFile(`${dir}/openapi.yaml`, contract)
  const generated = await generateSchema(pathToFileURL(`${dir}/openapi.yaml`))
  t.not(generated, await readFile(COMMITTED, 'utf8'))
  t.match(generated, /readPlant: \{/)
})

t.test('int64 fields are bigint, and their names are listed for the parser; other numbers stay numbers', async (t) => {
  const committed = await readFile(COMMITTED, 'utf8')
  t.match(committed, /export const int64Properties: ReadonlySet<string> = new Set\(\["id", "plantId"\]\);/)
  t.match(committed, /plantId: bigint;/)
  t.match(committed, /after\?: bigint;/)
  t.match(committed, /error: number;/)
})

t.test('the generator refuses a contract where a name is an int64 in one place and another number in another', async (t) => {
  const dir = t.testdir()
  const schema = (format: string): object => ({ type: 'object', properties: { id: { type: 'integer', format } } })
  const contract = { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {}, components: { schemas: { A: schema('int64'), B: schema('int32') } } }
  await writeFile(`${dir}/openapi.json`, JSON.stringify(contract))
  await t.rejects(generateSchema(pathToFileURL(`${dir}/openapi.json`)), /properties both int64 and another number: id/)
  // Each alone is fine.
  contract.components.schemas.B = schema('int64')
  await writeFile(`${dir}/openapi.json`, JSON.stringify(contract))
  t.match(await generateSchema(pathToFileURL(`${dir}/openapi.json`)), /new Set\(\["id"\]\)/)
})

t.test('client/README.md, shipped in the package, names its version and the version of the API it speaks', async (t) => {
  const readme = await readFile('client/README.md', 'utf8')
  const { version } = JSON.parse(await readFile('client/package.json', 'utf8'))
  const api = /^info:\n(?: {2}.*\n)*? {2}version: (\S+)$/m.exec(await readFile('openapi.yaml', 'utf8'))?.[1]
  t.ok(api)
  t.match(readme, `Version ${version} of the Plant Store's client, for version ${api} of its API (\`info.version\``)
})
