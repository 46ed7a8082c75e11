import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { AUTH, assertError, postPlant } from './app.ts'

export async function putPlant (app: FastifyInstance, id: string | number, body: unknown, ifMatch?: string) {
  return await app.inject({
    method: 'PUT',
    url: `/plants/${id}`,
    headers: { ...AUTH, 'content-type': 'application/json', ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }) },
    payload: typeof body === 'string' ? body : JSON.stringify(body)
  })
}

async function read (app: FastifyInstance, id: string | number) {
  return await app.inject({ url: `/plants/${id}`, headers: AUTH })
}

/** Group-commit transactions so far, as /metrics counts them. */
async function commits (app: FastifyInstance): Promise<number> {
  const text = (await app.inject({ url: '/metrics', headers: AUTH })).body
  return Number(/^plant_store_commit_batch_size_count (\d+)$/m.exec(text)?.[1] ?? 0)
}

/** PUT /plants/{id} on every engine: run by storeSuite with the app of each. */
export function updateSuite (t: Test, app: (t: Test) => Promise<FastifyInstance>): void {
  t.test('PUT replaces name and tag, answers the plant as GET does, with the same ETag', async (t) => {
    const store = await app(t)
    await postPlant(store, '{"id":9007199254740993,"name":"Aloe","tag":"succulent"}')
    const put = await putPlant(store, '9007199254740993', '{"id":5,"name":"Aloe vera","tag":"medicinal","extra":1}')
    t.equal(put.statusCode, 200)
    t.equal(put.body, '{"id":9007199254740993,"name":"Aloe vera","tag":"medicinal"}', 'the id of the path; an id in the body is ignored')
    const got = await read(store, '9007199254740993')
    t.equal(got.body, put.body)
    t.equal(put.headers.etag, got.headers.etag, 'GET and PUT give one state one ETag')
    const untagged = await putPlant(store, '9007199254740993', { name: 'Aloe vera' })
    t.equal(untagged.body, '{"id":9007199254740993,"name":"Aloe vera"}', 'no tag removes the tag')
    t.not(untagged.headers.etag, put.headers.etag)
    assertError(t, await read(store, 5), 404, 'plant_not_found')
  })

  t.test('PUT of a missing plant is a 404, with If-Match * too; a bad body is a 400', async (t) => {
    const store = await app(t)
    assertError(t, await putPlant(store, 404, { name: 'x' }), 404, 'plant_not_found')
    assertError(t, await putPlant(store, 404, { name: 'x' }, '*'), 404, 'plant_not_found')
    await postPlant(store, { id: 1, name: 'a' })
    assertError(t, await putPlant(store, 1, { tag: 'x' }), 400, 'invalid_body')
    assertError(t, await putPlant(store, 1, { name: 'n'.repeat(1001) }), 400, 'invalid_body')
    assertError(t, await putPlant(store, 1, { name: 'n', tag: 't'.repeat(101) }), 400, 'invalid_body')
    t.equal((await read(store, 1)).body, '{"id":1,"name":"a"}', 'nothing written')
  })

  t.test('If-Match: a stale ETag is a 412 that writes nothing, a fresh one or * a 200', async (t) => {
    const store = await app(t)
    await postPlant(store, { id: 3, name: 'Fern', tag: 'shade' })
    const first = (await read(store, 3)).headers.etag as string
    const fresh = await putPlant(store, 3, { name: 'Fern', tag: 'indoor' }, first)
    t.equal(fresh.statusCode, 200)
    const stale = await putPlant(store, 3, { name: 'Ivy' }, first)
    assertError(t, stale, 412, 'precondition_failed')
    t.same((await read(store, 3)).json(), { id: 3, name: 'Fern', tag: 'indoor' }, 'the 412 wrote nothing')
    const current = fresh.headers.etag as string
    for (const refused of [`W/${current}`, current.slice(1), 'garbage', '""']) {
      assertError(t, await putPlant(store, 3, { name: 'Ivy' }, refused), 412, 'precondition_failed')
    }
    t.equal((await putPlant(store, 3, { name: 'Ivy' }, `"other", ${current}`)).statusCode, 200, 'a list naming the current ETag')
    t.equal((await putPlant(store, 3, { name: 'Moss' }, '*')).statusCode, 200, '* is any existing plant')
    t.equal((await read(store, 3)).json().name, 'Moss')
  })

  t.test('an update that changes nothing answers 200 with the ETag and writes nothing', async (t) => {
    const store = await app(t)
    await postPlant(store, { id: 4, name: 'Sage', tag: 'herb' })
    const etag = (await read(store, 4)).headers.etag as string
    const before = await commits(store)
    const same = await putPlant(store, 4, { name: 'Sage', tag: 'herb' }, etag)
    t.equal(same.statusCode, 200)
    t.equal(same.headers.etag, etag)
    t.equal(await commits(store), before, 'no commit')
  })

  t.test('concurrent updates with one ETag: exactly one 200, the rest 412', async (t) => {
    const store = await app(t)
    await postPlant(store, { id: 5, name: 'Basil' })
    const etag = (await read(store, 5)).headers.etag as string
    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => await putPlant(store, 5, { name: `editor ${i}` }, etag)))
    const codes = answers.map((res) => res.statusCode)
    t.equal(codes.filter((code) => code === 200).length, 1, 'one winner')
    t.equal(codes.filter((code) => code === 412).length, 19, 'every other editor is told the plant changed')
    const winner = answers.find((res) => res.statusCode === 200)!
    t.equal((await read(store, 5)).body, winner.body, 'the winner is what is stored')
  })
}
