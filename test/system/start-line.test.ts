import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import t from 'tap'
import { loadConfig } from '../../src/config.ts'
import { startLine } from '../../src/process/start-line.ts'
import { storeLocation } from '../../src/store/location.ts'
import { startServer } from '../helpers/server.ts'

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
const TOKEN = 'start-line-token-0123456789'

t.test('once it listens the service logs one start line: version, Node, store and where, address, docs', async (t) => {
  const dir = t.testdir()
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${relative(process.cwd(), dir)}/plants.db` })
  const port = new URL(server.url).port
  t.equal(server.stdout.length, 1, 'the start line alone, without Fastify\'s "Server listening at"')
  const line = JSON.parse(server.stdout[0])
  t.match(line, {
    level: 30,
    version,
    node: process.version,
    store: 'sqlite',
    database: `${dir}/plants.db`,
    address: `127.0.0.1:${port}`,
    docs: `http://127.0.0.1:${port}/docs`,
    msg: `plant-store ${version} on Node ${process.version} listening on 127.0.0.1:${port}, store sqlite ${dir}/plants.db, docs at http://127.0.0.1:${port}/docs`
  })
  t.equal((await server.request('GET', '/docs', { token: null })).statusCode, 200, 'the docs are where it says')
})

t.test('where the store is: never the PostgreSQL user or password', async (t) => {
  const postgres = (url: string) => storeLocation({ engine: 'postgres', url, poolSize: 1 })
  t.equal(postgres('postgres://plants:s3cr%40t@db.internal:5432/plants?sslmode=require&password=other'), 'db.internal:5432/plants')
  t.equal(postgres('postgresql://plants@db/plants'), 'db/plants')
  t.equal(postgres('postgres:///plants?host=/run/postgresql'), '/run/postgresql/plants', 'a socket directory')
  t.equal(postgres('postgres:///'), '(default host)/(default database)', 'left to PGHOST and PGDATABASE')
  t.equal(postgres('postgres://u:p#w@db/plants'), 'an unparsable PostgreSQL URL', 'nothing of a URL that cannot be read')
  t.equal(storeLocation({ engine: 'memory' }), 'memory')
  t.equal(storeLocation({ engine: 'sqlite', path: ':memory:' }), 'memory', 'sqlite::memory: too')
  t.equal(storeLocation({ engine: 'sqlite', path: 'data/x.db' }), `${process.cwd()}/data/x.db`, 'an absolute path')
})

t.test('bound to every interface, the docs are given at the loopback address', async (t) => {
  const config = loadConfig({ API_TOKENS: TOKEN, DATABASE_URL: 'postgres://plants:secret@db:5432/plants' })
  const [any4, message] = startLine(config, { address: '0.0.0.0', family: 'IPv4', port: 8080 })
  t.match(any4, { address: '0.0.0.0:8080', docs: 'http://127.0.0.1:8080/docs', store: 'postgres', database: 'db:5432/plants' })
  t.notMatch(message, /secret|plants:/, 'no password nor user in the sentence')
  t.match(startLine(config, { address: '::', family: 'IPv6', port: 8080 })[0], { address: '[::]:8080', docs: 'http://[::1]:8080/docs' })
  t.match(startLine(config, { address: 'fd00::1', family: 'IPv6', port: 8080 })[0], { address: '[fd00::1]:8080', docs: 'http://[fd00::1]:8080/docs' })
})
