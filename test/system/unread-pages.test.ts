import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { startServer } from '../helpers/server.ts'

// Issue #54, finding 5: a page of the change feed that its client does not read costs no
// more than a plant page does, whatever the characters of the plants.

const MiB = 1024 * 1024
const PLANTS = 700
const CONNECTIONS = 200

const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024

/**
 * How much resident memory a fresh service grows by while CONNECTIONS clients each ask for
 * `path` and read nothing. Its plants have names of 3-byte characters (3 KB), each created
 * then updated: a page of either kind is about 2 MiB at its largest.
 */
async function unreadGrowth (t: Test, path: string): Promise<{ growth: number, pageBytes: number }> {
  const server = await startServer(t, { API_TOKENS: TOKEN, RATE_LIMIT_PER_TOKEN: '0', MAX_EVENT_LOOP_DELAY_MS: '0', MAX_HEAP_USED_PERCENT: '0' })
  const name = (i: number): string => `${i}`.padStart(5, '0') + '漢'.repeat(995)
  for (const method of ['POST', 'PUT']) {
    for (let i = 0; i < PLANTS; i += 100) {
      await Promise.all(Array.from({ length: 100 }, async (_, j) => {
        const id = i + j
        const res = method === 'POST'
          ? await server.request('POST', '/plants', { body: { id, name: name(id) } })
          : await server.request('PUT', `/plants/${id}`, { body: { name: name(id + PLANTS) } })
        if (res.statusCode !== 200) t.fail(`${method} ${id}: ${res.statusCode}`)
      }))
    }
  }
  const pageBytes = Buffer.byteLength((await server.request('GET', path)).body)
  const pid = server.child.pid!
  const before = rssOf(pid)
  const sockets: Socket[] = []
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  for (let i = 0; i < CONNECTIONS; i++) {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
    socket.on('error', () => {})
    socket.pause()
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`)
    sockets.push(socket)
  }
  let peak = 0
  for (let i = 0; i < 12; i++) {
    await sleep(250)
    peak = Math.max(peak, rssOf(pid) - before)
  }
  return { growth: peak, pageBytes }
}

t.test('a feed page a client does not read costs no more than a plant page', async (t) => {
  const plants = await unreadGrowth(t, '/plants?limit=1000')
  const feed = await unreadGrowth(t, `/plants/changes?after=${PLANTS}&limit=1000`)
  const mib = (bytes: number): string => (bytes / MiB).toFixed(1)
  t.ok(feed.pageBytes <= 2 * MiB + 4096, `a feed page is ${mib(feed.pageBytes)} MiB (a plant page ${mib(plants.pageBytes)} MiB)`)
  // Both pages are about 2 MiB; how much of each the sockets take varies from run to run.
  t.ok(feed.growth <= 2 * plants.growth,
    `${CONNECTIONS} unread feed pages took ${mib(feed.growth)} MiB more resident memory, ${CONNECTIONS} plant pages ${mib(plants.growth)} MiB`)
})
