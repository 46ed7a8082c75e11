import t from 'tap'
import { testApp } from './helpers/app.js'

t.test('GET / sends a person to the documentation, without a token', async (t) => {
  const app = await testApp(t)
  const res = await app.inject({ url: '/' })
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, '/docs')
  const docs = await app.inject({ url: res.headers.location })
  t.equal(docs.statusCode, 200)
  t.match(docs.headers['content-type'], /^text\/html/, 'Swagger UI')
  await app.ready()
  t.notOk(Object.hasOwn(app.swagger().paths ?? {}, '/'), 'no part of the API: not in the OpenAPI document')
})
