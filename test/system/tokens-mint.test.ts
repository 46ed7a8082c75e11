import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import t from 'tap'
import { NODE_ARGS, startServer, waitForLine } from '../helpers/server.ts'

const SCRIPT = new URL('../../scripts/mint-token.ts', import.meta.url).pathname

/** `npm run token -- <args>`, run from its TypeScript source as tap runs this test, instead of a build. */
async function mint (...args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn(process.execPath, [...NODE_ARGS, SCRIPT, ...args])
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const [code] = await once(child, 'exit')
  return { code, stdout, stderr }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const TOKEN = /^[A-Za-z0-9_-]{43}\n$/ // 32 random bytes, base64url: URL-safe, no padding

t.test('the mint command prints a new token once on stdout and its entry on stderr; both work against a running service', async (t) => {
  const dir = t.testdir()
  const nextYear = new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10)
  const importer = await mint('--name', 'importer', '--scopes', 'plants:write', '--expires', nextYear)
  t.equal(importer.code, 0, importer.stderr)
  t.match(importer.stdout, TOKEN, 'the token alone, 256 bits, URL-safe')
  const token = importer.stdout.trim()
  const entry = JSON.parse(importer.stderr.trim().split('\n').at(-1)!)
  t.same(entry, { name: 'importer', sha256: sha256(token), scopes: ['plants:write'], expiresAt: `${nextYear}T00:00:00.000Z` }, 'the entry holds the hash, never the token')
  t.notOk(importer.stderr.includes(token), 'the token is printed once')
  const again = await mint('--name', 'importer', '--scopes', 'plants:write')
  t.not(again.stdout, importer.stdout, 'each token is new')

  const file = `${dir}/tokens.json`
  writeFileSync(file, JSON.stringify([entry]))
  const server = await startServer(t, { API_TOKENS_FILE: file })
  t.equal((await server.request('POST', '/plants', { token, body: { id: 1, name: 'Basil' } })).statusCode, 200, 'the minted token creates')
  t.equal((await server.request('GET', '/plants', { token })).statusCode, 403, 'and does nothing else')

  // --file appends the entry; SIGHUP puts it in force.
  const dashboard = await mint('--name', 'dashboard', '--scopes', 'plants:read', '--file', file)
  t.equal(dashboard.code, 0, dashboard.stderr)
  t.match(dashboard.stderr, `added "dashboard" to ${file}`)
  t.same(JSON.parse(readFileSync(file, 'utf8')).map((e: { name: string }) => e.name), ['importer', 'dashboard'], 'appended to the entries there')
  server.child.kill('SIGHUP')
  await waitForLine(server.stdout, /API_TOKENS_FILE reloaded/)
  const reader = dashboard.stdout.trim()
  t.equal((await server.request('GET', '/plants', { token: reader })).statusCode, 200, 'the new token reads')
  t.equal((await server.request('POST', '/plants', { token: reader, body: { id: 2, name: 'Mint' } })).statusCode, 403, 'and does not write')
  t.equal((await server.request('POST', '/plants', { token, body: { id: 3, name: 'Sage' } })).statusCode, 200, 'the first token still works')
})

t.test('scopes may be listed with commas or repeated; --file creates the file', async (t) => {
  const file = `${t.testdir()}/new.json`
  const res = await mint('--name', 'ops', '--scopes', 'plants:read,plants:write', '--scopes', 'metrics:read', '--file', file)
  t.equal(res.code, 0, res.stderr)
  t.same(JSON.parse(readFileSync(file, 'utf8')), [{ name: 'ops', sha256: sha256(res.stdout.trim()), scopes: ['plants:read', 'plants:write', 'metrics:read'] }])
})

t.test('the mint command refuses what the service would refuse, prints no token, and leaves the file as it was', async (t) => {
  const file = `${t.testdir()}/tokens.json`
  t.equal((await mint('--name', 'importer', '--scopes', 'plants:write', '--file', file)).code, 0)
  const before = readFileSync(file, 'utf8')
  const cases: Array<[string[], RegExp]> = [
    [['--name', 'importer'], /--name and --scopes are required\nusage: npm run --silent token -- /],
    [['--scopes', 'plants:read'], /--name and --scopes are required/],
    [['--name', 'x', '--scopes', 'plants:read', '--force'], /Unknown option '--force'/],
    [['--name', 'x', '--scopes', 'plants:admin'], /entry 1 \("x"\): scopes must be a list of one or more of plants:read, plants:write/],
    [['--name', 'two words', '--scopes', 'plants:read'], /entry 1 \("two words"\): name must be 1 to 64 letters/],
    [['--name', 'x', '--scopes', 'plants:read', '--expires', 'soon'], /--expires must be a date such as 2027-01-01 or an RFC 3339 date-time; got "soon"/],
    [['--name', 'x', '--scopes', 'plants:read', '--expires', '2020-01-01'], /--expires 2020-01-01 is not in the future/],
    [['--name', 'x', '--scopes', 'plants:read', '--expires', '2099-02-30'], /--expires must be a date such as 2027-01-01 or an RFC 3339 date-time; got "2099-02-30"/],
    [['--name', 'importer', '--scopes', 'plants:read', '--file', file], new RegExp(`${file}: entry 2 \\("importer"\\): the name is already that of entry 1`)]
  ]
  const results = await Promise.all(cases.map(async ([args]) => await mint(...args)))
  for (const [i, [args, message]] of cases.entries()) {
    const res = results[i]
    t.equal(res.code, 1, args.join(' '))
    t.match(res.stderr, message, args.join(' '))
    t.equal(res.stdout, '', 'no token')
  }
  t.equal(readFileSync(file, 'utf8'), before, 'the file is unchanged')
  writeFileSync(file, '[')
  const broken = await mint('--name', 'y', '--scopes', 'plants:read', '--file', file)
  t.match(broken.stderr, `${file} is not JSON`, 'a file that cannot be used is not overwritten')
  t.equal(readFileSync(file, 'utf8'), '[')
})
