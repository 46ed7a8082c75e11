import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { buildApp, type Seams } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { ERROR_CODES, type ErrorCode } from '../../schemas/error.ts'

export const TOKEN = 'test-token-0123456789'
export const AUTH = { authorization: `Bearer ${TOKEN}` }

/** An app on the memory store with a known token, closed when the test ends. */
export async function testApp (t: Test, env: NodeJS.ProcessEnv = {}, seams: Seams = {}): Promise<FastifyInstance> {
  // The overload guard is tested on its own (system/limits): elsewhere a busy test machine must not turn requests away.
  const app = await buildApp(loadConfig({ API_TOKENS: TOKEN, DATABASE_URL: 'memory:', LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', MAX_HEAP_USED_PERCENT: '0', ...env }), seams)
  t.teardown(async () => await app.close())
  return app
}

/**
 * POST /plants with the token; a string or Buffer body is sent as it is, anything
 * else as JSON. A header given as undefined is left out.
 */
export async function postPlant (
  app: FastifyInstance,
  body: unknown,
  headers: InjectOptions['headers'] = {}
): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: 'POST',
    url: '/plants',
    headers: Object.fromEntries(Object.entries({ ...AUTH, 'content-type': 'application/json', ...headers })
      .filter(([, value]) => value !== undefined)),
    payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
  })
}

/** What assertError reads of an answer: an in-process app's, or a running service's. */
export type Answered = Pick<LightMyRequestResponse, 'statusCode' | 'headers' | 'json'>

/**
 * Asserts the response is exactly the Error shape with this status, and a code the
 * catalogue gives that status (this code, when one is given); returns its message.
 */
export function assertError (t: Test, res: Answered, status: number, what: string | ErrorCode = `status ${status}`): string {
  const code = Object.hasOwn(ERROR_CODES, what) ? what as ErrorCode : undefined
  t.equal(res.statusCode, status, what)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  const keys = ['code', 'error', 'message', ...(body.details === undefined ? [] : ['details'])].sort()
  t.same(Object.keys(body).sort(), keys, 'only error, message, code and maybe details')
  t.equal(body.error, status, 'error is the status code')
  t.type(body.message, 'string')
  if (code !== undefined) t.equal(body.code, code, `code ${code}`)
  else t.equal(ERROR_CODES[body.code as ErrorCode]?.status, status, `code ${body.code} is one of status ${status}`)
  if (body.details !== undefined) {
    t.ok(Array.isArray(body.details) && body.details.length > 0 && body.details.every((d: unknown) =>
      typeof d === 'object' && d !== null && Object.keys(d).sort().join() === 'field,message'), 'details are { field, message }')
  }
  return body.message
}

/**
 * Sends 20 GETs of `url` in one turn of the event loop, then a health check: how long the
 * health check waited, and the whole burst took, under the same load. Each of the burst's
 * requests is handled within that turn unless pages take turns: the health check then
 * answers after every page of the burst.
 */
export async function healthBehindBurst (t: Test, app: FastifyInstance, url: string): Promise<{ waited: number, all: number }> {
  const burst = Array.from({ length: 20 }, async () => (await app.inject({ url, headers: AUTH })).statusCode)
  const started = performance.now()
  t.equal((await app.inject({ url: '/health' })).statusCode, 200)
  const waited = performance.now() - started
  t.same(await Promise.all(burst), Array(20).fill(200), `the burst of ${url} answered`)
  return { waited, all: performance.now() - started }
}
