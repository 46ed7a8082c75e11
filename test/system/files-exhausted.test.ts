import { execFile } from 'node:child_process'
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import t from 'tap'
import { MAX_SUBSCRIPTIONS } from '../../schemas/webhook.ts'
import { TOKEN } from '../helpers/app.ts'
import { startServer } from '../helpers/server.ts'
import { retryUntil } from '../helpers/wait.ts'
import { subscribe } from '../helpers/webhook-client.ts'

const execFileAsync = promisify(execFile)

// Files run out: a flood of connections, a process that can open none, webhook attempts that
// would take them all. Each service stays up and answers once files are free.

t.test('a flood of idle connections cannot take every file: the service stays up, and answers once it ends', async (t) => {
  // 400 files: connections may take 320 of them (80%); the flood opens 1,000.
  const server = await startServer(t, { API_TOKENS: TOKEN }, { openFiles: 400 })
  const flood: Socket[] = []
  for (let i = 0; i < 1000; i++) {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
    socket.on('error', () => {})
    flood.push(socket)
  }
  t.teardown(() => { for (const socket of flood) socket.destroy() })
  // The overload check reads the process's memory every second: with no file left for
  // it, it threw EMFILE from a timer and the service shut down.
  await sleep(2500)
  t.equal(server.child.exitCode, null, 'still running')
  const held = flood.filter((socket) => !socket.destroyed && socket.readyState === 'open').length
  t.ok(held <= 320, `${held} of 1,000 connections held open`)
  for (const socket of flood) socket.destroy()
  const answer = await retryUntil(async () => await server.request('GET', '/plants/1').catch(() => undefined), (a) => a !== undefined, 5000, 50)
  t.equal(answer.value?.statusCode, 404, 'a request answered once the flood has gone')
  t.notOk(server.stdout.some((line) => line.includes('EMFILE')), 'no file-descriptor error logged')
})

t.test('with no file left to open, the service stays up, and answers once files are free again', async (t) => {
  const server = await startServer(t, { API_TOKENS: TOKEN })
  const pid = String(server.child.pid)
  const { stdout: soft } = await execFileAsync('prlimit', ['--pid', pid, '--nofile', '--output=SOFT', '--noheadings'])
  // A soft limit of 3 files: every file the process opens from now on fails (EMFILE),
  // whoever took the others; the hard limit stays, so that it can be lifted again.
  await execFileAsync('prlimit', ['--pid', pid, '--nofile=3:'])
  // The overload check used to read the process's resident memory, a file under /proc,
  // once a second: from a timer, its EMFILE brought the service down within a second.
  await sleep(2500)
  t.equal(server.child.exitCode, null, 'still running')
  await execFileAsync('prlimit', ['--pid', pid, `--nofile=${soft.trim()}:`])
  const answer = await server.request('GET', '/plants/1')
  t.equal(answer.statusCode, 404, 'a request answered once files are free')
  t.notOk(server.stdout.some((line) => line.includes('"level":60')), 'nothing fatal logged')
})

t.test('webhook attempts take at most their share of files: subscriptions to a receiver that holds every connection cannot take them all', async (t) => {
  // A receiver that accepts connections and never answers, counting those it holds.
  let held = 0
  let mostHeld = 0
  const receiver = createServer((socket) => {
    mostHeld = Math.max(mostHeld, ++held)
    socket.on('close', () => held--)
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { receiver.close(); receiver.unref() })
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
  // 300 files: webhook attempts may take 30 of them (10%), one connection for each of
  // the 20 subscriptions there can be; 64 each (WEBHOOK_CONCURRENCY's default) took
  // every file with 8 of them.
  const server = await startServer(t, {
    API_TOKENS: TOKEN,
    DATABASE_URL: `sqlite:${t.testdir()}/plants.db`,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // Closing waits half the grace for the attempts in flight, which never end here.
    SHUTDOWN_GRACE_MS: '1000'
  }, { openFiles: 300 })
  for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) await subscribe(t, server, url)
  const creates = []
  for (let id = 1; id <= 200; id++) creates.push(server.request('POST', '/plants', { body: { id, name: `plant ${id}` } }))
  const statuses = (await Promise.all(creates)).map((res) => res.statusCode)
  t.same(statuses.filter((status) => status !== 200), [], '200 creates answered 200')
  await sleep(2000)
  t.equal(server.child.exitCode, null, 'still running')
  t.ok(mostHeld >= 1 && mostHeld <= MAX_SUBSCRIPTIONS, `at most one connection per subscription: ${mostHeld} held at once`)
  t.equal((await server.request('POST', '/plants', { body: { id: 201, name: 'one more' } })).statusCode, 200, 'a create answered after')
  t.notOk(server.stdout.some((line) => line.includes('EMFILE') || line.includes('"level":60')), 'no file-descriptor error or fatal logged')
})
