import t from 'tap'
import { AUTH, testApp } from './helpers/app.js'

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
