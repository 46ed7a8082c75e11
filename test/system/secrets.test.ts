import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { failedStart, logsArrived, startServer, waitForLine } from '../helpers/server.ts'

const PASSWORD = 'S3cret-Pa55word'

/** A PostgreSQL ErrorResponse message: fields of a type byte and a NUL-terminated string. */
function errorResponse (fields: Record<string, string>): Buffer {
  const body = Buffer.concat([
    ...Object.entries(fields).map(([type, value]) => Buffer.from(`${type}${value}\0`)),
    Buffer.from([0])
  ])
  const header = Buffer.alloc(5)
  header.write('E')
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

/** A hostile or misconfigured peer: it answers every connection with an error quoting the password. */
async function peerAnswering (t: Test, code: string): Promise<string> {
  // Whatever it answers ends up in the driver's error.
  const peer = createServer((socket) => {
    socket.once('data', () => socket.end(errorResponse({
      S: 'FATAL', C: code, M: `password authentication failed for user "plants" with password ${PASSWORD}`
    })))
    socket.on('error', () => {})
  })
  peer.listen(0, '127.0.0.1')
  await once(peer, 'listening')
  t.teardown(() => { peer.close() })
  const { port } = peer.address() as AddressInfo
  return `postgres://plants:${PASSWORD}@127.0.0.1:${port}/plants`
}

t.test('a database that answers with the password in its error: no log line and no public answer shows it', async (t) => {
  // Starting up (57P03): the service waits for it, logging each attempt.
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: await peerAnswering(t, '57P03') })
  const logged = await waitForLine(server.stdout, /cannot start yet/)
  t.match(logged, /password authentication failed/, 'the cause is logged')
  t.match(logged, /\[redacted\]/, 'with the password cut out')

  const ready = await server.request('GET', '/health/ready', { token: null })
  t.equal(ready.statusCode, 503)
  t.same(ready.json(), { error: 503, message: 'not ready: the store is unavailable', code: 'not_ready' }, 'the public answer names no cause')
  await waitForLine(server.stdout, /"msg":"not ready"/)

  const create = await server.request('POST', '/plants', { body: '{"id":1,"name":"a"}' })
  t.equal(create.statusCode, 503)
  t.notMatch(create.body, /password|authentication/)

  await logsArrived(server)
  const everything = [...server.stdout, ...server.stderr].join('\n')
  t.notOk(everything.includes(PASSWORD), 'the password is in no line the service wrote')
  t.notOk(everything.includes(TOKEN), 'nor is the token')
})

t.test('a database that refuses the password, quoting it: the start stops, its one line without the password', async (t) => {
  const url = await peerAnswering(t, '28P01')
  const { code, stderr } = await failedStart({ API_TOKENS: TOKEN, DATABASE_URL: url })
  t.equal(code, 1)
  const { port } = new URL(url)
  t.equal(stderr, `plant-store: cannot start: DATABASE_URL postgres://127.0.0.1:${port}/plants cannot be used: PostgreSQL, or a pooler in front of it, ` +
    'refuses the service\'s connection settings (password authentication failed for user "plants" with password [redacted], 28P01): ' +
    'check the user, password, database name and parameters of DATABASE_URL, and the settings of a pooler in front of PostgreSQL\n')
})
