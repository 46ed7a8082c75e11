import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import t from 'tap'
import type { TSchema } from '@sinclair/typebox'
import { Env } from '../schemas/env.ts'
import { ConfigError, loadConfig } from '../src/config.ts'
import { fuzzSettings } from './helpers/fuzz.ts'

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

t.test("the README's configuration table lists exactly the variables of the schema, with their defaults", async (t) => {
  const section = README.slice(README.indexOf('## Configuration'), README.indexOf('\n## ', README.indexOf('## Configuration') + 1))
  const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map(([, name, fallback]) => [name, fallback.trim()])
  const schema = Object.entries(Env.properties).map(([name, property]) =>
    [name, property.default === '' ? 'empty' : `\`${String(property.default)}\``])
  t.same(rows.sort(), schema.sort())
})

const NOT_ORIGINS = 'CORS_ORIGINS must be * or list origins as a browser sends them (http or https, host, optional port, no path: https://app.example.com)'

t.test('.env.example names exactly the variables of the schema, each with its default', async (t) => {
  const example = readFileSync(new URL('../.env.example', import.meta.url), 'utf8')
  const variables = [...example.matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)].map(([, name, value]) => [name, value])
  t.same(variables.sort(), Object.entries(Env.properties).map(([name, property]) => [name, String(property.default)]).sort())
})

t.test('the default database is in the project directory; a relative DATABASE_URL is the working directory\'s', async (t) => {
  const project = fileURLToPath(new URL('..', import.meta.url))
  t.same(loadConfig({ API_TOKENS: 'a-token-of-sixteen-chars' }).database, { engine: 'sqlite', path: `${project}data/plants.db` })
  t.same(loadConfig({ API_TOKENS: 'a-token-of-sixteen-chars', DATABASE_URL: 'sqlite:data/plants.db' }).database, { engine: 'sqlite', path: 'data/plants.db' })
})

t.test('each variable is read with its default, and a bad value names the variable and what it must be', async (t) => {
  const defaults = loadConfig({ API_TOKENS: 'a-token-of-sixteen-chars' })
  t.equal(defaults.PORT, 3000)
  t.equal(defaults.BODY_LIMIT, 16 * 1024)
  t.equal(defaults.METRICS_REQUIRE_TOKEN, true, '/metrics needs a token unless opened')
  t.equal(defaults.METRICS_CACHE_MS, 1000)
  t.equal(loadConfig({ PORT: '', API_TOKENS: '' }).PORT, 3000, 'an empty variable is an unset one')
  t.equal(loadConfig({ PORT: '8080', METRICS_REQUIRE_TOKEN: 'false' }).PORT, 8080)
  t.same(defaults.corsOrigins, [], 'no CORS unless asked for')
  t.same(loadConfig({ CORS_ORIGINS: ' https://app.example.com,http://localhost:5173 ,' }).corsOrigins, ['https://app.example.com', 'http://localhost:5173'])
  t.same(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, ['*'])
  const cases: Array<[NodeJS.ProcessEnv, string]> = [
    [{ PORT: '65536' }, 'PORT must be a whole number from 0 to 65535; got "65536"'],
    [{ PORT: '1.5' }, 'PORT must be a whole number from 0 to 65535; got "1.5"'],
    [{ MAX_HEAP_USED_PERCENT: '101' }, 'MAX_HEAP_USED_PERCENT must be a number from 0 to 100; got "101"'],
    [{ METRICS_REQUIRE_TOKEN: 'yes' }, 'METRICS_REQUIRE_TOKEN must be true or false; got "yes"'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "loud"'],
    [{ HEADERS_TIMEOUT_MS: '20', REQUEST_TIMEOUT_MS: '10' }, 'HEADERS_TIMEOUT_MS must not be larger than REQUEST_TIMEOUT_MS'],
    [{ BODY_BYTES_IN_FLIGHT: '1000' }, 'BODY_BYTES_IN_FLIGHT must be at least BODY_LIMIT, or a body of the largest size would never be read'],
    [{ SHUTDOWN_DELAY_MS: '10000' }, 'SHUTDOWN_DELAY_MS must be shorter than SHUTDOWN_GRACE_MS, which bounds the whole shutdown, the delay included'],
    [{ DATABASE_URL: 'mysql://u:secret@h/db' }, 'DATABASE_URL must be sqlite:<path>, postgres://… or memory:; got a URL starting "mysql:"'],
    [{ DATABASE_URL: 'memory' }, 'DATABASE_URL must be sqlite:<path>, postgres://… or memory:; got a value with no scheme'],
    [{ TRUST_PROXY: 'not-an-address' }, 'TRUST_PROXY must list IP addresses'],
    [{ CORS_ORIGINS: 'https://app.example.com/' }, `${NOT_ORIGINS}; got "https://app.example.com/", which as an origin is "https://app.example.com"`],
    [{ CORS_ORIGINS: 'https://ok.example, https://App.Example.com:443' }, `${NOT_ORIGINS}; got "https://App.Example.com:443", which as an origin is "https://app.example.com"`],
    [{ CORS_ORIGINS: 'app.example.com' }, `${NOT_ORIGINS}; got "app.example.com"`],
    [{ CORS_ORIGINS: 'ftp://files.example.com' }, `${NOT_ORIGINS}; got "ftp://files.example.com"`],
    [{ CORS_ORIGINS: 'https://*.example.com' }, `${NOT_ORIGINS}; got "https://*.example.com"`],
    [{ CORS_ORIGINS: '*, https://app.example.com' }, 'CORS_ORIGINS: * allows every origin and cannot be listed with others']
  ]
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), new ConfigError(message), JSON.stringify(env))
  }
})

t.test('a numeric variable is taken only as decimal digits within its bounds; any other value stops the start, naming it (property)', async (t) => {
  const { seed, numRuns } = fuzzSettings(1000)
  const properties: Record<string, TSchema> = Env.properties
  const numeric = Object.keys(properties).filter((name) => properties[name].type === 'integer' || properties[name].type === 'number')
  // What Ajv's coercion used to take: Infinity past every bound, blanks as 0, other bases and exponents.
  const tricky = fc.constantFrom('Infinity', '-Infinity', '+Infinity', '1e400', '-1e400', ' ', '\t', '\n', '0x10', '0b101', '0o17', '1e3',
    ' 80', '80 ', '+80', '80.0', '.5', '5.', 'NaN', '٣', '１', '1_000', '00080', '-0', '9'.repeat(25))
  const value = fc.oneof(tricky, fc.string({ maxLength: 12 }), fc.integer({ min: -2, max: 2_000_000 }).map(String),
    fc.double({ noNaN: true }).map(String), fc.nat(200).map((n) => `${n}.${n % 10}`))
  const property = fc.property(fc.constantFrom(...numeric), value, (name, text) => {
    const schema = properties[name]
    const decimal = (schema.type === 'integer' ? /^-?\d{1,20}$/ : /^-?\d{1,20}(\.\d{1,20})?$/).test(text)
    const inBounds = decimal && Number(text) >= schema.minimum && Number(text) <= schema.maximum
    let config
    try {
      config = loadConfig({ API_TOKENS: 'a-token-of-sixteen-chars', [name]: text })
    } catch (err) {
      // Within its bounds, a value may still break a rule that relates it to another
      // variable's (a request's deadline against its headers').
      const named = err instanceof ConfigError && (inBounds ? err.message.includes(name) : err.message.startsWith(`${name} must be `))
      if (!named) throw new Error(`${name}=${JSON.stringify(text)}: ${String(err)}`)
      return
    }
    if (text !== '' && !inBounds) throw new Error(`${name}=${JSON.stringify(text)} taken (port ${config.PORT})`)
  })
  try {
    fc.assert(property, { seed, numRuns })
    t.pass(`${numRuns} generated values (FUZZ_SEED=${seed})`)
  } catch (err) {
    t.fail(`FUZZ_SEED=${seed} FUZZ_RUNS=${numRuns}: ${(err as Error).message}`)
  }
})
