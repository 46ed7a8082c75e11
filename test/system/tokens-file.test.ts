import { execFile } from 'node:child_process'
import { chmodSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import t from 'tap'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { assertError, testApp } from '../helpers/app.ts'
import { failedStart } from '../helpers/server.ts'
import { entryOf, testToken, writeTokens } from '../helpers/tokens.ts'

const execFileAsync = promisify(execFile)

const reader = testToken('dashboard', ['plants:read'])
const writer = testToken('importer', ['plants:write'])
const bearer = (token: { value: string }) => ({ authorization: `Bearer ${token.value}` })

t.test('a tokens file: its tokens are accepted by their hash, API_TOKENS is not needed and no token is generated', async (t) => {
  const file = writeTokens(`${t.testdir()}/tokens.json`, [reader, writer])
  const config = loadConfig({ API_TOKENS_FILE: file })
  t.equal(config.generatedToken, undefined, 'no token is generated')
  t.same(config.secrets, [], 'no token value is held')
  t.same(config.tokens.map((token) => [token.name, token.hash.toString('hex'), [...token.scopes]]),
    [reader, writer].map((token) => { const entry = entryOf(token); return [entry.name, entry.sha256, entry.scopes] }))

  const app = await testApp(t, { API_TOKENS: '', API_TOKENS_FILE: file })
  t.equal((await app.inject({ url: '/plants', headers: bearer(reader) })).statusCode, 200)
  const res = await app.inject({ url: '/plants', headers: { authorization: `Bearer ${entryOf(reader).sha256 as string}` } })
  t.equal(assertError(t, res, 401), 'the bearer token is not valid', 'the hash itself is no token')
})

t.test('hashes may be written in either case', async (t) => {
  const entry = entryOf(reader)
  const file = writeTokens(`${t.testdir()}/tokens.json`, JSON.stringify([{ ...entry, sha256: (entry.sha256 as string).toUpperCase() }]))
  const app = await testApp(t, { API_TOKENS: '', API_TOKENS_FILE: file })
  t.equal((await app.inject({ url: '/plants', headers: bearer(reader) })).statusCode, 200)
})

t.test('an expired token answers 401 invalid_token saying it expired; expiry is decided at each request', async (t) => {
  const past = testToken('old', ['plants:read'], '2020-01-01T00:00:00Z')
  const soon = testToken('soon', ['plants:read'], new Date(Date.now() + 1500).toISOString())
  const app = await testApp(t, { API_TOKENS: '', API_TOKENS_FILE: writeTokens(`${t.testdir()}/tokens.json`, [past, soon]), AUTH_FAILURE_LIMIT: '1' })
  const expired = await app.inject({ url: '/plants', headers: bearer(past) })
  t.equal(assertError(t, expired, 401), 'the bearer token expired at 2020-01-01T00:00:00.000Z; ask for a new one')
  t.equal(expired.headers['www-authenticate'], 'Bearer realm="plant-store", error="invalid_token", error_description="the token expired"')
  t.equal((await app.inject({ url: '/plants', headers: bearer(soon) })).statusCode, 200, 'not expired yet')
  t.equal((await app.inject({ url: '/plants', headers: bearer(soon) })).statusCode, 200, 'an expired token is no guess: the address is not locked out')
  await sleep(1600)
  t.match(assertError(t, await app.inject({ url: '/plants', headers: bearer(soon) }), 401), /expired at/, 'expired since')
})

t.test('a tokens file that cannot be used stops the start, naming the file and the entry', async (t) => {
  const dir = t.testdir()
  const good = entryOf(reader)
  const cases: Array<[string, unknown, RegExp]> = [
    ['not JSON', '[{"name":', /tokens\.json is not JSON: /],
    ['not an array', { tokens: [] }, /tokens\.json: must be a JSON array of token entries$/],
    ['not an object', [good, 5], /tokens\.json: entry 2: must be an object with the fields name, sha256, scopes, expiresAt/],
    ['a duplicate name', [good, { ...entryOf(writer), name: 'dashboard' }], /tokens\.json: entry 2 \("dashboard"\): the name is already that of entry 1$/],
    ['a duplicate hash, in another case', [good, { ...good, name: 'other', sha256: (good.sha256 as string).toUpperCase() }],
      /tokens\.json: entry 2 \("other"\): the sha256 is already that of entry 1 \("dashboard"\)$/],
    ['an unknown scope', [{ ...good, scopes: ['plants:read', 'plants:admin'] }], /entry 1 \("dashboard"\): scopes must be a list of one or more of plants:read, plants:write, webhooks:manage, metrics:read/],
    ['no scope', [{ ...good, scopes: [] }], /entry 1 \("dashboard"\): scopes must be a list of one or more of/],
    ['a short hash', [{ ...good, sha256: 'ab'.repeat(31) }], /entry 1 \("dashboard"\): sha256 must be 64 hex digits/],
    ['a long hash', [{ ...good, sha256: 'ab'.repeat(33) }], /entry 1 \("dashboard"\): sha256 must be 64 hex digits/],
    ['a hash that is not hex', [{ ...good, sha256: 'g'.repeat(64) }], /entry 1 \("dashboard"\): sha256 must be 64 hex digits/],
    ['no hash', [{ name: 'dashboard', scopes: ['plants:read'] }], /entry 1 \("dashboard"\): sha256 is missing: it must be 64 hex digits/],
    ['the token instead of its hash', [{ name: 'dashboard', token: reader.value, scopes: ['plants:read'] }], /entry 1 \("dashboard"\): sha256 is missing/],
    ['a misspelt field', [{ ...good, expires: '2030-01-01T00:00:00Z' }], /entry 1 \("dashboard"\): "expires" is not a field of an entry \(name, sha256, scopes, expiresAt\)/],
    ['a date without a time', [{ ...good, expiresAt: '2030-01-01' }], /entry 1 \("dashboard"\): expiresAt must be an RFC 3339 date-time/],
    ['a date that is none', [{ ...good, expiresAt: '2030-13-01T00:00:00Z' }], /entry 1 \("dashboard"\): expiresAt must be an RFC 3339 date-time/],
    // Date.parse rolls these forward (to March 2nd, to the next midnight): the token would outlive its expiry.
    ['February 30th', [{ ...good, expiresAt: '2027-02-30T00:00:00Z' }], /entry 1 \("dashboard"\): expiresAt must be an RFC 3339 date-time/],
    ['hour 24', [{ ...good, expiresAt: '2027-01-01T24:00:00+02:00' }], /entry 1 \("dashboard"\): expiresAt must be an RFC 3339 date-time/],
    ['more entries than 1,000', Array.from({ length: 1001 }, (_, i) => ({ ...good, name: `t${i}` })), /tokens\.json: holds 1001 entries, more than 1000$/],
    ['more than 1 MiB', `[${' '.repeat(1024 * 1024)}]`, /tokens\.json is larger than 1048576 bytes: a tokens file holds at most 1000 entries$/],
    ['a name with a space', [{ ...good, name: 'the dashboard' }], /entry 1 \("the dashboard"\): name must be 1 to 64 letters, digits/],
    ['an empty name', [{ ...good, name: '' }], /entry 1 \(""\): name must be 1 to 64/]
  ]
  for (const [what, content, message] of cases) {
    const file = writeTokens(`${dir}/tokens.json`, typeof content === 'string' ? content : JSON.stringify(content))
    t.throws(() => loadConfig({ API_TOKENS_FILE: file }), { message: new RegExp(`^API_TOKENS_FILE .*${message.source}`) }, what)
  }
  t.throws(() => loadConfig({ API_TOKENS_FILE: `${dir}/none.json` }), { message: /^API_TOKENS_FILE .*none\.json cannot be read: ENOENT/ })
  // Read whole, a named pipe nobody writes to held the start forever, and /dev/zero took gigabytes.
  await execFileAsync('mkfifo', [`${dir}/pipe`])
  for (const file of [`${dir}/pipe`, '/dev/zero', dir]) {
    t.throws(() => loadConfig({ API_TOKENS_FILE: file }), { message: `API_TOKENS_FILE ${file} is not a regular file: a tokens file is read again on SIGHUP, which a pipe or a device cannot be` })
  }
  t.equal(loadConfig({ API_TOKENS_FILE: writeTokens(`${dir}/tokens.json`, [{ ...reader, expiresAt: '2028-02-29T23:59:59-12:00' }]) }).tokens[0].expiresAt?.toISOString(),
    '2028-03-01T11:59:59.000Z', 'a leap day, and an offset, are read exactly')
})

t.test('API_TOKENS together with API_TOKENS_FILE stops the start', async (t) => {
  const file = writeTokens(`${t.testdir()}/tokens.json`, [reader])
  t.throws(() => loadConfig({ API_TOKENS: 'test-token-0123456789', API_TOKENS_FILE: file }),
    new ConfigError('API_TOKENS and API_TOKENS_FILE are both set: use one, the file for tokens with scopes'))
})

t.test('the service refuses to start on a bad tokens file, with the message on stderr', async (t) => {
  const dir = t.testdir()
  const file = writeTokens(`${dir}/tokens.json`, JSON.stringify([entryOf(reader), { ...entryOf(writer), scopes: ['plants:delete'] }]))
  const refused = await failedStart({ API_TOKENS_FILE: file })
  t.equal(refused.code, 1)
  t.match(refused.stderr, `plant-store: cannot start: API_TOKENS_FILE ${file}: entry 2 ("importer"): scopes must be a list of one or more of`)
  const missing = await failedStart({ API_TOKENS_FILE: `${dir}/missing.json` })
  t.equal(missing.code, 1)
  t.match(missing.stderr, `plant-store: cannot start: API_TOKENS_FILE ${dir}/missing.json cannot be read`)
  const both = await failedStart({ API_TOKENS_FILE: file, API_TOKENS: 'test-token-0123456789' })
  t.match(both.stderr, 'API_TOKENS and API_TOKENS_FILE are both set')
  const writable = writeTokens(`${dir}/writable.json`, [reader])
  chmodSync(writable, 0o664)
  const open = await failedStart({ API_TOKENS_FILE: writable })
  t.equal(open.code, 1)
  t.match(open.stderr, `plant-store: cannot start: API_TOKENS_FILE ${writable} has mode 0664: others may write it`)
})

t.test('an empty tokens file accepts no token', async (t) => {
  const app = await testApp(t, { API_TOKENS: '', API_TOKENS_FILE: writeTokens(`${t.testdir()}/tokens.json`, []) })
  assertError(t, await app.inject({ url: '/plants', headers: bearer(reader) }), 401)
})

t.test('the per-token rate limit is keyed by the token\'s name: a rotated token keeps its budget', async (t) => {
  const file = writeTokens(`${t.testdir()}/tokens.json`, [reader, writer])
  const app = await testApp(t, { API_TOKENS: '', API_TOKENS_FILE: file, RATE_LIMIT_PER_TOKEN: '3' })
  const codes = []
  for (let i = 0; i < 4; i++) codes.push((await app.inject({ url: '/plants', headers: bearer(reader) })).statusCode)
  t.same(codes, [200, 200, 200, 429])
  const rotated = testToken('dashboard', ['plants:read'])
  writeTokens(file, [rotated, writer])
  t.ok(app.reloadTokens())
  assertError(t, await app.inject({ url: '/plants', headers: bearer(rotated) }), 429, 'the new value of "dashboard" shares its budget')
  t.not((await app.inject({ method: 'DELETE', url: '/plants/1', headers: bearer(writer) })).statusCode, 429, 'another name has its own')
})
