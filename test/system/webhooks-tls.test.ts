import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { logsArrived, startServer, waitForLine } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'
import { deliveryLog, subscribe } from '../helpers/webhook-client.ts'

// What a delivery log says of a receiver whose TLS certificate fails: the kind of problem,
// never the names the certificate holds (someone else's network); the operator's log has them.
// A real process: NODE_EXTRA_CA_CERTS, read at start, makes the test CA trusted.

const FIXTURES = 'test/fixtures/tls'
const fixture = (name: string): Buffer => readFileSync(`${FIXTURES}/${name}`)

/** An https receiver on 127.0.0.1 with this certificate; answers 204. */
async function tlsReceiver (t: Test, name: string): Promise<string> {
  const server = createServer({ key: fixture(`${name}-key.pem`), cert: fixture(`${name}.pem`) }, (_request, response) => response.writeHead(204).end())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  // localhost resolves to loopback; the certificate is not for it.
  return `https://localhost:${(server.address() as AddressInfo).port}/hook`
}

t.test('a receiver whose TLS certificate fails: the delivery log says which kind of failure, the warn log line names the certificate', async (t) => {
  const server = await startServer(t, {
    API_TOKENS: TOKEN,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_BASE_MS: '3600000',
    NODE_EXTRA_CA_CERTS: `${FIXTURES}/ca.pem`
  })
  const cases = [
    { name: 'receiver', error: 'the TLS certificate is not valid for the host', logged: /secret-receiver\.internal\.corp/ },
    { name: 'self-signed', error: 'the TLS certificate is not trusted', logged: /self-signed certificate/ }
  ]
  const subscriptions = []
  for (const { name } of cases) subscriptions.push(await subscribe(t, server, await tlsReceiver(t, name)))
  t.equal((await server.request('POST', '/plants', { body: { id: 1, name: 'Fern' } })).statusCode, 200)

  for (const [i, { name, error, logged }] of cases.entries()) {
    const { id } = subscriptions[i]
    const { value: [delivery] } = await retryUntil(async () => await deliveryLog(server, id), (log) => log[0]?.attempts === 1, 10_000, 50)
    t.match(delivery, { status: 'pending', attempts: 1, lastError: error }, `${name}: the kind of failure`)
    t.notMatch(delivery.lastError, /internal\.corp|localhost|altnames|127\.0\.0\.1/, `${name}: nothing the certificate holds`)
    const line = await waitForLine(server.stdout, new RegExp(`"level":40.*"webhook":"${id}".*webhook attempt failed`))
    t.match(JSON.parse(line), { webhook: id, error, detail: logged }, `${name}: the log has it in full, with the webhook's id`)
  }
  await logsArrived(server)
  t.notOk(server.stdout.some((line) => /"level":(50|60)/.test(line)), 'nothing logged as an error')
})
