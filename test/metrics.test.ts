import t from 'tap'
import { AUTH, assertError, postPlant, testApp } from './helpers/app.ts'

t.test('GET /metrics reports requests, store operations, batch sizes and the process, in Prometheus text', async (t) => {
  const app = await testApp(t, { DATABASE_URL: `sqlite:${t.testdir()}/plants.db` })
  await Promise.all([1, 2, 3].map(async (id) => await postPlant(app, { id, name: 'p' })))
  await postPlant(app, { id: 1, name: 'other' })
  await app.inject({ url: '/plants/2', headers: AUTH })
  const res = await app.inject({ url: '/metrics', headers: AUTH })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  const text = res.body
  t.match(text, /http_request_duration_seconds_count\{method="POST",route="\/plants",status="200"\} 3\n/)
  t.match(text, /http_request_duration_seconds_count\{method="POST",route="\/plants",status="409"\} 1\n/)
  t.match(text, /http_request_duration_seconds_count\{method="GET",route="\/plants\/:id",status="200"\} 1\n/)
  t.match(text, /plant_store_operation_duration_seconds_count\{operation="create",outcome="created"\} 3\n/)
  t.match(text, /plant_store_operation_duration_seconds_count\{operation="create",outcome="conflict"\} 1\n/)
  t.match(text, /plant_store_operation_duration_seconds_count\{operation="get",outcome="found"\} 1\n/)
  const batches = Number(/plant_store_commit_batch_size_count (\d+)/.exec(text)?.[1])
  const batched = Number(/plant_store_commit_batch_size_sum (\d+)/.exec(text)?.[1])
  t.equal(batched, 4, 'four writes were committed')
  t.ok(batches >= 1 && batches < 4, `in ${batches} batches: the three concurrent creates shared a commit`)
  t.match(text, /process_resident_memory_bytes \d+/)
  t.match(text, /nodejs_eventloop_lag_seconds/)
})

t.test('every histogram\'s buckets are cumulative and end at +Inf with its count; one without labels shows zeros before its first value', async (t) => {
  const app = await testApp(t, { DATABASE_URL: `sqlite:${t.testdir()}/plants.db`, METRICS_CACHE_MS: '0' })
  const before = (await app.inject({ url: '/metrics', headers: AUTH })).body
  t.match(before, /plant_store_commit_batch_size_bucket\{le="1"\} 0\n/)
  t.match(before, /plant_store_commit_batch_size_bucket\{le="\+Inf"\} 0\n/)
  t.match(before, /plant_store_commit_batch_size_count 0\n/)

  for (let id = 1; id <= 3; id++) await postPlant(app, { id, name: 'one by one' })
  await Promise.all([4, 5, 6, 7, 8].map(async (id) => await postPlant(app, { id, name: 'together' })))
  await app.inject({ url: '/plants/404', headers: AUTH })
  const text = (await app.inject({ url: '/metrics', headers: AUTH })).body
  // Each series: its bucket lines in order, then its count.
  const series = new Map<string, { buckets: Array<[string, number]>, count?: number }>()
  for (const [, name, le, labels, value] of text.matchAll(/^(\w+)_bucket\{le="([^"]+)",?(.*)\} (\d+)$/gm)) {
    const key = `${name}{${labels}}`
    if (!series.has(key)) series.set(key, { buckets: [] })
    series.get(key)!.buckets.push([le, Number(value)])
  }
  for (const [, name, labels, value] of text.matchAll(/^(\w+)_count(?:\{(.*)\})? (\d+)$/gm)) {
    const entry = series.get(`${name}{${labels ?? ''}}`)
    if (entry !== undefined) entry.count = Number(value)
  }
  t.ok(series.size >= 5, `the request, store and batch histograms' series: ${[...series.keys()].join(' ')}`)
  for (const [key, { buckets, count }] of series) {
    const bounds = buckets.map(([le]) => le === '+Inf' ? Infinity : Number(le))
    t.same(bounds, [...bounds].sort((a, b) => a - b), `${key}: bounds ascending`)
    t.equal(bounds.at(-1), Infinity, `${key}: ends at +Inf`)
    const values = buckets.map(([, value]) => value)
    t.ok(values.every((value, i) => i === 0 || value >= values[i - 1]), `${key}: cumulative ${values.join(' ')}`)
    t.equal(values.at(-1), count, `${key}: +Inf is the count`)
  }
  t.match(text, /plant_store_commit_batch_size_bucket\{le="1"\} 3\n/, 'the three creates one by one were batches of one')
  t.match(text, /plant_store_commit_batch_size_sum 8\n/, 'eight writes in all')
})

t.test('GROUP_COMMIT_MAX_BATCH=1 commits every write on its own', async (t) => {
  const app = await testApp(t, { DATABASE_URL: `sqlite:${t.testdir()}/plants.db`, GROUP_COMMIT_MAX_BATCH: '1' })
  await Promise.all([1, 2, 3].map(async (id) => await postPlant(app, { id, name: 'p' })))
  const text = (await app.inject({ url: '/metrics', headers: AUTH })).body
  t.match(text, /plant_store_commit_batch_size_count 3\n/)
  t.match(text, /plant_store_commit_batch_size_bucket\{le="1"\} 3\n/)
})

t.test('/metrics is behind the bearer token by default; METRICS_REQUIRE_TOKEN=false opens it', async (t) => {
  const app = await testApp(t)
  assertError(t, await app.inject({ url: '/metrics' }), 401)
  t.equal((await app.inject({ url: '/metrics', headers: AUTH })).statusCode, 200)
  const doc = (await app.inject({ url: '/docs/json' })).json()
  t.same(doc.paths['/metrics'].get.security, [{ bearerAuth: ['metrics:read'] }], 'the document names the scope it needs')
  t.ok(doc.paths['/metrics'].get.responses['401'] && doc.paths['/metrics'].get.responses['403'])

  const open = await testApp(t, { METRICS_REQUIRE_TOKEN: 'false' })
  t.equal((await open.inject({ url: '/metrics' })).statusCode, 200, 'opened: no token needed')
  t.same((await open.inject({ url: '/docs/json' })).json().paths['/metrics'].get.security, [], 'and the document says so')
})

t.test('scrapes within METRICS_CACHE_MS are one computed answer; concurrent ones share its computing', async (t) => {
  const app = await testApp(t, { METRICS_CACHE_MS: '60000' })
  const scrape = async (): Promise<string> => (await app.inject({ url: '/metrics', headers: AUTH })).body
  const first = await scrape()
  await postPlant(app, { id: 1, name: 'p' })
  t.equal(await scrape(), first, 'a create and a scrape later, the same text')

  const fresh = await testApp(t, { METRICS_CACHE_MS: '0' })
  const { registry } = fresh.metrics
  let computed = 0
  const compute = registry.metrics.bind(registry)
  t.intercept(registry, 'metrics', { value: async () => { computed++; return await compute() } })
  await Promise.all([1, 2, 3].map(async () => await fresh.inject({ url: '/metrics', headers: AUTH })))
  t.equal(computed, 1, 'three at once: computed once')
  await fresh.inject({ url: '/metrics', headers: AUTH })
  t.equal(computed, 2, 'with 0, the next scrape computes again')
})
