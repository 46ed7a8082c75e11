import t from 'tap'
import { failedStart, startServer, waitForLine } from './helpers/server.js'

t.test('with neither API_TOKENS nor API_TOKENS_FILE the service makes a token, prints it once, and runs closed', async (t) => {
  const server = await startServer(t, { API_TOKENS: '' })
  const line = await waitForLine(server.stderr, /generated token/)
  const token = /generated token (\S+)/.exec(line)![1]
  t.ok(token.length >= 32, 'a long random token')

  const open = await server.request('POST', '/plants', { body: { id: 1, name: 'Rose' }, token: 'guess' })
  t.equal(open.statusCode, 401, 'no access without it')
  const res = await server.request('POST', '/plants', { body: { id: 1, name: 'Rose', tag: 'flower' }, token })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { name: 'Rose', tag: 'flower' })
  t.equal(server.stderr.filter((l) => l.includes('generated token')).length, 1, 'printed once')
  t.notOk(server.stdout.some((l) => l.includes(token)), 'and not in the logs')
  const completed = JSON.parse(await waitForLine(server.stdout, /"status":200/))
  t.equal(completed.token, 'generated', 'where it is named "generated"')
})

t.test('logs are JSON lines, one per request, and never hold a token', async (t) => {
  const token = 'log-test-token-0123456789'
  const server = await startServer(t, { API_TOKENS: token })
  await server.request('POST', '/plants', { body: { id: 1, name: 'Rose' }, token })
  await server.request('POST', '/plants', { body: { id: 2, name: 'Tulip' }, token: 'wrong-token-456' })
  await server.request('GET', '/docs/json', { token: null })
  await waitForLine(server.stdout, /docs\/json/)
  const lines = server.stdout.map((line) => JSON.parse(line))
  t.ok(lines.some((line) => line.node === process.version && line.msg === `plant-store starting on Node ${process.version}`), 'the start names the Node version')
  const completed = lines.filter((line) => line.msg === 'request completed')
  t.same(completed.map((line) => [line.method, line.route, line.status]), [
    ['POST', '/plants', 200], ['POST', '/plants', 401], ['GET', '/docs/json', 200]
  ])
  t.ok(completed.every((line) => typeof line.reqId === 'string' && typeof line.ms === 'number'))
  t.same(completed.map((line) => line.token), ['API_TOKENS[1]', undefined, undefined], 'a known token is named, by its place in API_TOKENS')
  const all = server.stdout.join('\n') + server.stderr.join('\n')
  t.notOk(all.includes(token), 'the valid token is not logged')
  t.notOk(all.includes('wrong-token-456'), 'nor a rejected one')
})

t.test('a bad configuration stops the start with a message naming the variable', async (t) => {
  const cases = [
    [{ PORT: 'eighty' }, /PORT must be a whole number/],
    [{ BODY_LIMIT: '-5' }, /BODY_LIMIT must be a whole number/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ API_TOKENS: 'good-token-0123456789,has space' }, /API_TOKENS: token 2 has characters/],
    [{ API_TOKENS: 'a' }, /API_TOKENS: token 1 is 1 characters long; a token needs at least 16/],
    [{ API_TOKENS: 'good-token-0123456789,fifteen-chars-x' }, /API_TOKENS: token 2 is 15 characters long/]
  ] as const
  const results = await Promise.all(cases.map(async ([env]) => await failedStart(env)))
  results.forEach(({ code, stderr }, i) => {
    t.equal(code, 1, JSON.stringify(cases[i][0]))
    t.match(stderr, cases[i][1])
  })
})
