import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { AUTH, assertError, postPlant } from './app.ts'
import { putPlant } from './update-suite.ts'

// Preconditions on every write (issue #54, finding 7; RFC 9110 13.1, 13.2), on every engine.

async function deletePlant (app: FastifyInstance, id: number, headers: Record<string, string> = {}) {
  return await app.inject({ method: 'DELETE', url: `/plants/${id}`, headers: { ...AUTH, ...headers } })
}

async function put (app: FastifyInstance, id: number, body: unknown, headers: Record<string, string>) {
  return await app.inject({ method: 'PUT', url: `/plants/${id}`, headers: { ...AUTH, 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) })
}

async function etagOf (app: FastifyInstance, id: number): Promise<string> {
  return (await app.inject({ url: `/plants/${id}`, headers: AUTH })).headers.etag as string
}

async function stored (app: FastifyInstance, id: number): Promise<unknown> {
  const res = await app.inject({ url: `/plants/${id}`, headers: AUTH })
  return res.statusCode === 200 ? res.json() : res.statusCode
}

export function preconditionsSuite (t: Test, app: (t: Test) => Promise<FastifyInstance>): void {
  t.test('DELETE with a stale If-Match is a 412 that deletes nothing; a fresh one, or *, deletes', async (t) => {
    const store = await app(t)
    await postPlant(store, { id: 1, name: 'Fern' })
    const read = await etagOf(store, 1)
    t.equal((await putPlant(store, 1, { name: 'Boston fern' }, read)).statusCode, 200, 'another client updates it')
    assertError(t, await deletePlant(store, 1, { 'if-match': read }), 412, 'precondition_failed')
    t.same(await stored(store, 1), { id: 1, name: 'Boston fern' }, 'the stale delete did not undo the update')
    assertError(t, await deletePlant(store, 1, { 'if-none-match': '*' }), 412, 'precondition_failed')
    assertError(t, await deletePlant(store, 1, { 'if-none-match': `W/${await etagOf(store, 1)}` }), 412, 'precondition_failed')
    t.equal((await deletePlant(store, 1, { 'if-match': `"other", ${await etagOf(store, 1)}` })).statusCode, 204, 'a list naming the current ETag')
    t.equal(await stored(store, 1), 404)
    assertError(t, await deletePlant(store, 1, { 'if-match': '*' }), 404, 'plant_not_found')
    await postPlant(store, { id: 2, name: 'Ivy' })
    t.equal((await deletePlant(store, 2, { 'if-match': '*' })).statusCode, 204, '* is any existing plant')
  })

  t.test('PUT with If-None-Match: * or naming the current ETag is a 412 that writes nothing; another ETag writes', async (t) => {
    const store = await app(t)
    await postPlant(store, { id: 3, name: 'Sage' })
    const current = await etagOf(store, 3)
    for (const ifNoneMatch of ['*', current, `W/${current}`, `"other", ${current}`]) {
      assertError(t, await put(store, 3, { name: 'Thyme' }, { 'if-none-match': ifNoneMatch }), 412, 'precondition_failed')
    }
    t.same(await stored(store, 3), { id: 3, name: 'Sage' }, 'nothing written')
    t.equal((await put(store, 3, { name: 'Thyme' }, { 'if-none-match': '"other"' })).statusCode, 200)
    assertError(t, await put(store, 3, { name: 'Mint' }, { 'if-match': await etagOf(store, 3), 'if-none-match': '*' }), 412, 'precondition_failed')
    assertError(t, await put(store, 404, { name: 'Mint' }, { 'if-none-match': '*' }), 404, 'plant_not_found')
  })

  t.test('If-Unmodified-Since is refused on every write unless If-Match is sent, which it then gives way to', async (t) => {
    const store = await app(t)
    await postPlant(store, { id: 4, name: 'Basil' })
    const since = { 'if-unmodified-since': new Date(Date.now() + 86_400_000).toUTCString() }
    assertError(t, await put(store, 4, { name: 'Dill' }, since), 400, 'precondition_unsupported')
    assertError(t, await deletePlant(store, 4, since), 400, 'precondition_unsupported')
    assertError(t, await postPlant(store, { id: 5, name: 'Dill' }, since), 400, 'precondition_unsupported')
    t.same([await stored(store, 4), await stored(store, 5)], [{ id: 4, name: 'Basil' }, 404], 'nothing written')
    t.equal((await put(store, 4, { name: 'Dill' }, { ...since, 'if-match': await etagOf(store, 4) })).statusCode, 200)
  })

  t.test('a create\'s target is the collection, which exists and has no ETag', async (t) => {
    const store = await app(t)
    assertError(t, await postPlant(store, { id: 6, name: 'Aloe' }, { 'if-none-match': '*' }), 412, 'precondition_failed')
    assertError(t, await postPlant(store, { id: 6, name: 'Aloe' }, { 'if-match': '"x"' }), 412, 'precondition_failed')
    t.equal(await stored(store, 6), 404, 'nothing written')
    t.equal((await postPlant(store, { id: 6, name: 'Aloe' }, { 'if-match': '*' })).statusCode, 200)
    t.equal((await postPlant(store, { id: 7, name: 'Aloe' }, { 'if-none-match': '"x"' })).statusCode, 200)
  })

  t.test('concurrent updates and deletes with one ETag: exactly one wins, the rest are 412 or, once it is gone, 404', async (t) => {
    const store = await app(t)
    await postPlant(store, { id: 8, name: 'Rosemary' })
    const etag = await etagOf(store, 8)
    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
      i % 2 === 0 ? await deletePlant(store, 8, { 'if-match': etag }) : await put(store, 8, { name: `editor ${i}` }, { 'if-match': etag })))
    const codes = answers.map((res) => res.statusCode)
    t.equal(codes.filter((code) => code === 200 || code === 204).length, 1, `one winner: ${codes.join()}`)
    t.ok(codes.every((code) => [200, 204, 404, 412].includes(code)), 'every other one is told the plant changed, or is gone')
    const winner = answers.find((res) => res.statusCode === 200 || res.statusCode === 204)!
    t.same(await stored(store, 8), winner.statusCode === 204 ? 404 : winner.json(), 'the winner\'s write is what is stored')
  })
}
