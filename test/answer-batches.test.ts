import { connect, type AddressInfo, type Socket } from 'node:net'
import t from 'tap'
import { AUTH, testApp } from './helpers/app.ts'

// Answers ready in one event-loop turn leave together (src/plugins/answer-batches.ts):
// whatever goes wrong writing one of them must not hold up or fail the others.

t.test('an answer that cannot be written fails alone: a 500, and the others of its turn still leave', async (t) => {
  const app = await testApp(t)
  // Node refuses a header value holding a line break when the answer is written.
  app.get('/broken', { config: { quietLog: true } }, async (_request, reply) => {
    reply.header('x-broken', 'a\nb')
    return { ok: true }
  })
  const [broken, health, plant] = await Promise.all([
    app.inject({ url: '/broken' }),
    app.inject({ url: '/health' }),
    app.inject({ method: 'POST', url: '/plants', headers: AUTH, payload: { id: 1, name: 'Ivy' } })
  ])
  // Fastify answers an error raised while writing with its own fallback body, as it
  // does without this plugin; what matters here is that it is answered, and alone.
  t.equal(broken.statusCode, 500)
  t.equal(broken.headers['x-broken'], undefined, 'the refused header is not sent')
  t.equal(health.statusCode, 200)
  t.equal(plant.statusCode, 200)
  t.same(plant.json(), { name: 'Ivy' })
})

t.test('many answers of one turn all leave, each with its own body', async (t) => {
  const app = await testApp(t)
  const answers = await Promise.all(Array.from({ length: 200 }, async (_, i) =>
    await app.inject({ method: 'POST', url: '/plants', headers: AUTH, payload: { id: i, name: `Plant ${i}` } })))
  t.same(answers.map((answer) => answer.statusCode), Array(200).fill(200))
  t.same(answers.map((answer) => answer.json().name), Array.from({ length: 200 }, (_, i) => `Plant ${i}`))
})

t.test('a turn holding many requests lets their answers leave 64 at a time, not all at its end', async (t) => {
  const app = await testApp(t)
  // Registered after the batching hook: it runs for an answer once the batch lets it go.
  let released = 0
  app.addHook('onSend', (_request, _reply, _payload, done) => { released++; done() })
  // What each request's handler sees: how many answers had left before it ran.
  const seen: number[] = []
  app.get('/probe', { config: { quietLog: true } }, async () => {
    seen.push(released)
    return { ok: true }
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const clients = 150
  const sockets = await Promise.all(Array.from({ length: clients }, async () => await new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => { resolve(socket) }).on('error', reject)
  })))
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  // Every connection accepted first, then every request sent at once: the service reads
  // them all in one turn of its event loop.
  while (await new Promise<number>((resolve, reject) => app.server.getConnections((err, n) => err ? reject(err) : resolve(n))) < clients) {
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const answers = sockets.map(async (socket) => await new Promise<string>((resolve) => {
    let text = ''
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString()
      if (text.endsWith('{"ok":true}')) resolve(text)
    })
  }))
  for (const socket of sockets) socket.write('GET /probe HTTP/1.1\r\nhost: localhost\r\n\r\n')
  const texts = await Promise.all(answers)
  t.ok(texts.every((text) => text.startsWith('HTTP/1.1 200 ')), 'every request answered 200')
  t.equal(seen.length, clients)
  // All of them held to the end of the turn would leave none before the last handler.
  t.ok(seen.at(-1)! >= 64, `${seen.at(-1)} answers had left before the last handler ran`)
})
