import t from 'tap'
import { TOKEN, testApp } from '../helpers/app.ts'
import { logsArrived, startServer } from '../helpers/server.ts'

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

t.test('Swagger UI\'s index file sends a person to the docs page once, whatever follows its name', async (t) => {
  const app = await testApp(t)
  // With a query or a trailing slash, its redirect pointed at the same address, for ever.
  for (const url of ['/docs/static/index.html', '/docs/static/index.html?x=1', '/docs/static/index.html/', '/docs/static/index.html/?x']) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 302, url)
    t.equal(res.headers.location, '/docs/', `${url}: to the docs page`)
  }
  t.match((await app.inject({ url: '/docs/' })).headers['content-type'], /^text\/html/)
})

t.test('a request target sent whole (absolute-form) is served by its path; any other that is not a path is a 400', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN })
  const head = (text: string): string => text.split('\r\n\r\n', 1)[0]
  const ask = async (target: string, method = 'GET'): Promise<string> =>
    (await server.send([`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`])).text
  // Swagger UI built its redirect from the URL as sent: to the host the request line named.
  const redirect = head(await ask('http://evil.example/docs/static/index.html'))
  t.match(redirect, /^HTTP\/1.1 302 /)
  t.match(redirect, /\r\nlocation: \/docs\/(\r\n|$)/, 'to this service\'s own docs page')
  t.match(await ask('HTTP://evil.example:8080/health?probe=1'), /^HTTP\/1.1 200 .*\{"status":"ok"\}$/s, 'any case of scheme, a port, a query')
  t.match(await ask('https://a@evil.example'), /^HTTP\/1.1 302 .*\r\nlocation: \/docs\r\n/s, 'no path: the root')
  // The router made `*health` the health check. Node refuses `plants` itself, as not HTTP.
  for (const target of ['*health', '*']) {
    t.match(await ask(target), /\{"error":400,"message":"the request target must be a path such as \/plants \(or \* for OPTIONS\)","code":"invalid_request"\}$/, target)
  }
  t.match(await ask('plants'), /^HTTP\/1.1 400 .*"code":"invalid_request"\}$/s, 'plants')
  t.match(await ask('*', 'OPTIONS'), /^HTTP\/1.1 405 /, 'OPTIONS * is a request about the server: the method the root does not take')
  await logsArrived(server)
  t.notOk(server.stdout.some((line) => line.includes('evil.example')), 'the log has paths, not the hosts named')
})
