import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { Env } from '../schemas/env.js'
import { ConfigError, loadConfig } from '../src/config.js'

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
  t.equal(defaults.port, 3000)
  t.equal(defaults.bodyLimit, 1024 * 1024)
  t.equal(defaults.metricsRequireToken, false)
  t.equal(loadConfig({ PORT: '', API_TOKENS: '' }).port, 3000, 'an empty variable is an unset one')
  t.equal(loadConfig({ PORT: '8080', METRICS_REQUIRE_TOKEN: 'true' }).port, 8080)
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
