import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { AUTH, assertError, postPlant, testApp } from './app.ts'
import { changesSuite } from './changes-suite.ts'
import { preconditionsSuite } from './preconditions-suite.ts'
import { updateSuite } from './update-suite.ts'

async function get (app: FastifyInstance, url: string) {
  return await app.inject({ url, headers: AUTH })
}

/** Follows the Link rel="next" headers from `first`, returning every page's plants in order. */
export async function allPages (app: FastifyInstance, first: string): Promise<Array<{ id: number, name: string, tag?: string }>> {
  const seen = []
  for (let url: string | undefined = first; url !== undefined;) {
    const res = await get(app, url)
    if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`)
    seen.push(...res.json())
    url = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''))?.[1]
  }
  return seen
}

/**
 * The behaviour every store engine must show, through HTTP. Each engine's test file
 * runs this with the DATABASE_URL that selects it, so the engines cannot drift apart.
 */
export function storeSuite (t: Test, databaseUrl: (t: Test) => Promise<string>): void {
  const app = async (t: Test) => await testApp(t, { DATABASE_URL: await databaseUrl(t) })

  t.test('a created plant is there: the same plant again is a 200 retry, another is a 409', async (t) => {
    const store = await app(t)
    t.equal((await postPlant(store, { id: 10, name: 'Aloe', tag: 'succulent' })).statusCode, 200)
    const retry = await postPlant(store, { id: 10, name: 'Aloe', tag: 'succulent' })
    t.equal(retry.statusCode, 200)
    t.same(retry.json(), { name: 'Aloe', tag: 'succulent' })
    assertError(t, await postPlant(store, { id: 10, name: 'Agave', tag: 'succulent' }), 409)
    assertError(t, await postPlant(store, { id: 10, name: 'Aloe' }), 409)
    t.equal((await postPlant(store, { id: 11, name: 'Aloe' })).statusCode, 200)
    assertError(t, await postPlant(store, { id: 11, name: 'Aloe', tag: 'succulent' }), 409, 'no tag and a tag differ')
  })

  t.test('ids are exact int64, also beyond 2^53', async (t) => {
    const store = await app(t)
    const ids = ['9223372036854775807', '-9223372036854775808', '9007199254740992', '9007199254740993', '0']
    for (const id of ids) t.equal((await postPlant(store, `{"id":${id},"name":"n${id}"}`)).statusCode, 200, id)
    for (const id of ids) {
      t.equal((await postPlant(store, `{"id":${id},"name":"n${id}"}`)).statusCode, 200, `${id} retried`)
      assertError(t, await postPlant(store, `{"id":${id},"name":"other"}`), 409)
    }
  })

  t.test('concurrent creates of one id with different names: exactly one 200, the rest 409', async (t) => {
    const store = await app(t)
    const responses = await Promise.all(Array.from({ length: 50 }, async (_, i) =>
      await postPlant(store, { id: 77, name: `racer ${i}` })))
    const codes = responses.map((res) => res.statusCode)
    t.equal(codes.filter((c) => c === 200).length, 1, 'one winner')
    t.equal(codes.filter((c) => c === 409).length, 49, 'every other one a conflict')
    const winner = responses.find((res) => res.statusCode === 200)!.json().name
    t.equal((await postPlant(store, { id: 77, name: winner })).statusCode, 200, 'the winner is what was stored')
  })

  t.test('concurrent identical creates all answer 200', async (t) => {
    const store = await app(t)
    const codes = await Promise.all(Array.from({ length: 30 }, async () =>
      (await postPlant(store, { id: 78, name: 'same', tag: 't' })).statusCode))
    t.same(codes, Array(30).fill(200))
  })

  t.test('many concurrent creates of distinct ids are all stored', async (t) => {
    const store = await app(t)
    const codes = await Promise.all(Array.from({ length: 300 }, async (_, i) =>
      (await postPlant(store, { id: 1000 + i, name: `p${i}` })).statusCode))
    t.same(codes, Array(300).fill(200))
    const again = await Promise.all(Array.from({ length: 300 }, async (_, i) =>
      (await postPlant(store, { id: 1000 + i, name: 'other' })).statusCode))
    t.same(again, Array(300).fill(409), 'each is there')
  })

  t.test('names and tags are stored exactly: unicode, NUL, empty strings', async (t) => {
    const store = await app(t)
    const plant = { id: 90, name: 'Ficus 🌿 榕树 \u0000 end', tag: '' }
    t.same((await postPlant(store, plant)).json(), { name: plant.name, tag: '' })
    t.equal((await postPlant(store, plant)).statusCode, 200, 'an exact retry matches what was stored')
    assertError(t, await postPlant(store, { id: 90, name: plant.name }), 409, 'an empty tag is not a missing tag')
  })

  t.test('a stored plant is read back by id, its id an exact JSON integer', async (t) => {
    const store = await app(t)
    await postPlant(store, '{"id":9007199254740993,"name":"big","tag":"t"}')
    const res = await get(store, '/plants/9007199254740993')
    t.equal(res.statusCode, 200)
    t.equal(res.body, '{"id":9007199254740993,"name":"big","tag":"t"}')
    await postPlant(store, { id: -5, name: 'negative' })
    t.equal((await get(store, '/plants/-5')).body, '{"id":-5,"name":"negative"}', 'no tag, no tag field')
    t.equal((await get(store, '/plants/9223372036854775807')).body, '{"error":404,"message":"no plant has id 9223372036854775807","code":"plant_not_found"}')
  })

  t.test('a deleted plant is gone, answers 404 after, and its id can be created again', async (t) => {
    const store = await app(t)
    await postPlant(store, { id: 20, name: 'old' })
    const deleted = await store.inject({ method: 'DELETE', url: '/plants/20', headers: AUTH })
    t.equal(deleted.statusCode, 204)
    t.equal(deleted.body, '', 'no body')
    assertError(t, await get(store, '/plants/20'), 404)
    assertError(t, await store.inject({ method: 'DELETE', url: '/plants/20', headers: AUTH }), 404, 'deleting again is 404')
    t.equal((await postPlant(store, { id: 20, name: 'new' })).statusCode, 200, 'created again with another name')
    t.same((await get(store, '/plants/20')).json(), { id: 20, name: 'new' })
  })

  t.test('paging with a small limit visits every plant exactly once, in id order', async (t) => {
    const store = await app(t)
    // Ids in no particular order, negative and beyond 2^53 among them, written as JSON text.
    const ids = Array.from({ length: 300 }, (_, i) => String((i * 7919) % 1000 - 500))
    ids.push('9007199254740993', '-9007199254740993')
    const tagOf = (id: string) => BigInt(id) % 3n === 0n ? 'three' : 'other'
    for (let i = 0; i < ids.length; i += 50) {
      await Promise.all(ids.slice(i, i + 50).map(async (id) => await postPlant(store, `{"id":${id},"name":"p${id}","tag":"${tagOf(id)}"}`)))
    }
    const seen = await allPages(store, '/plants?limit=7')
    const expected = [...new Set(ids)].map(BigInt).sort((a, b) => (a < b ? -1 : 1)).map(String)
    // JSON.parse rounds the two big ids: compare the ids as the text carried them.
    t.same(seen.map((p) => p.name.slice(1)), expected, 'every plant once, ascending')

    const threes = await allPages(store, '/plants?limit=5&tag=three')
    t.same(threes.map((p) => p.name.slice(1)), expected.filter((id) => tagOf(id) === 'three'), 'the tag filter pages too')
    t.ok(threes.every((p) => p.tag === 'three'))
  })

  t.test('a page holds limit plants, the next link only when more remain', async (t) => {
    const store = await app(t)
    t.same((await get(store, '/plants')).json(), [], 'an empty store lists nothing')
    for (let id = 1; id <= 5; id++) await postPlant(store, { id, name: `p${id}` })
    const first = await get(store, '/plants?limit=2')
    t.same(first.json().map((p: { id: number }) => p.id), [1, 2])
    t.equal(first.headers.link, '</plants?limit=2&after=2>; rel="next"')
    const last = await get(store, '/plants?limit=2&after=4')
    t.same(last.json().map((p: { id: number }) => p.id), [5])
    t.notOk('link' in last.headers, 'no next link on the last page')
    const exact = await get(store, '/plants?limit=5')
    t.equal(exact.json().length, 5)
    t.notOk('link' in exact.headers, 'no next link when the page ends exactly at the last plant')
    t.same((await get(store, '/plants?after=9223372036854775807')).json(), [], 'nothing after the largest id')
    t.same((await get(store, '/plants?after=-9223372036854775808')).json().length, 5)
  })

  updateSuite(t, app)
  preconditionsSuite(t, app)
  changesSuite(t, databaseUrl)
}
