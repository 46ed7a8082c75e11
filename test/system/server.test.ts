import t from 'tap'
import { failedStart, logsArrived, startServer, waitForLine } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'

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
  await logsArrived(server)
  t.notOk(server.stdout.some((l) => l.includes(token)), 'and not in the logs')
  const completed = JSON.parse(await waitForLine(server.stdout, /"status":200/))
  t.equal(completed.token, 'generated', 'where it is named "generated"')
})

t.test('logs are JSON lines, one per request, with its time, client and error code, and never hold a token', async (t) => {
  const token = 'log-test-token-0123456789'
  const server = await startServer(t, { API_TOKENS: token, METRICS_REQUIRE_TOKEN: 'true' })
  await server.request('POST', '/plants', { body: { id: 1, name: 'Rose' }, token })
  await server.request('POST', '/plants', { body: { id: 2, name: 'Tulip' }, token: 'wrong-token-456' })
  // Routine successes, which machines and browsers ask for over and over: not at info.
  for (const path of ['/health', '/health/ready', '/', '/docs', '/docs/json', '/metrics']) {
    const answer = await server.request('GET', path, { token: path === '/metrics' ? token : null })
    t.ok(answer.statusCode < 400, `GET ${path} answered ${answer.statusCode}`)
  }
  await server.request('GET', '/metrics', { token: null })
  await server.request('GET', '/plants/1', { token })
  await waitForLine(server.stdout, /"route":"\/plants\/:id"/)
  const lines = server.stdout.map((line) => JSON.parse(line))
  const completed = lines.filter((line) => line.msg === 'request completed')
  t.same(completed.map((line) => [line.method, line.route, line.status]), [
    ['POST', '/plants', 200], ['POST', '/plants', 401], ['GET', '/metrics', 401], ['GET', '/plants/:id', 200]
  ], "a routine route's failure is at info like any other request")
  t.ok(completed.every((line) => typeof line.reqId === 'string' && typeof line.ms === 'number'))
  t.ok(lines.every((line) => new Date(line.time).toISOString() === line.time), 'ISO 8601 times')
  t.ok(completed.every((line) => line.client === '127.0.0.1'), "the client's address")
  t.same(completed.map((line) => line.token), ['API_TOKENS[1]', undefined, undefined, 'API_TOKENS[1]'], 'a known token is named, by its place in API_TOKENS')
  t.same(completed.map((line) => line.code), [undefined, 'token_invalid', 'token_missing', undefined], 'a failure names its error code')
  // RFC 6750's other place for a token, the query, which the service does not take.
  await server.request('GET', `/plants?access_token=${token}`, { token: null })
  await server.request('GET', `/plants?limit=1&access_token=${token}&access_token=wrong-token-456`, { token })
  const queried = JSON.parse(await waitForLine(server.stdout, /"code":"unknown_parameter"/))
  t.equal(queried.url, '/plants?limit=1&access_token=[redacted]&access_token=[redacted]', 'a token in the URL is cut out of it')
  // Spelled as a decoding, case-insensitive reader still takes it.
  for (const query of [`ACCESS_TOKEN=${token}`, `access%5Ftoken=${token}`, `x=1&%61ccess_token=${token}`, `Access%5fToken=${token}&limit=1`]) {
    await server.request('GET', `/plants?${query}`, { token: null })
  }
  const spelled = await retryUntil(async () => server.stdout.filter((line) => /"url":"\/plants\?[^"]*\[redacted\]/.test(line)).length, (n) => n >= 6, 5000, 10)
  t.equal(spelled.value, 6, 'every spelling is cut out too')
  await logsArrived(server)
  const all = server.stdout.join('\n') + server.stderr.join('\n')
  t.notOk(all.includes(token), 'the valid token is not logged')
  t.notOk(all.includes('wrong-token-456'), 'nor a rejected one')
})

t.test('at LOG_LEVEL=debug the routine successes are logged too, at debug', async (t) => {
  const server = await startServer(t, { API_TOKENS: 'log-test-token-0123456789', LOG_LEVEL: 'debug' })
  await server.request('GET', '/health', { token: null })
  const line = JSON.parse(await waitForLine(server.stdout, /"route":"\/health"/))
  t.match(line, { level: 20, msg: 'request completed', method: 'GET', status: 200, client: '127.0.0.1' })
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
