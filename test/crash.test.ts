import t from 'tap'
import { TOKEN } from './helpers/app.js'
import { postTo, startServer } from './helpers/server.js'

const CLIENTS = 32
const ACKED_BEFORE_KILL = 1500

async function create (url: string, id: number): Promise<number> {
  const res = await postTo(url, { id, name: `plant ${id}` })
  await res.arrayBuffer()
  return res.status
}

t.test('kill -9 in the middle of a stream of creates loses no acknowledged plant', async (t) => {
  const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${t.testdir()}/plants.db` }
  const server = await startServer(t, env)

  const acked: number[] = []
  let failed = 0
  const clients = Array.from({ length: CLIENTS }, async (_, client) => {
    for (let i = 0; ; i++) {
      const id = client * 10_000_000 + i
      try {
        if (await create(server.url, id) === 200) acked.push(id)
      } catch {
        failed++ // the connection died with the server: this one was never acknowledged
        return
      }
    }
  })
  while (acked.length < ACKED_BEFORE_KILL) await new Promise((resolve) => setTimeout(resolve, 5))
  server.child.kill('SIGKILL')
  await Promise.all(clients)
  await server.exited
  t.ok(failed > 0, `${failed} requests were in flight when the process died`)

  const restarted = await startServer(t, env)
  const missing: number[] = []
  for (let i = 0; i < acked.length; i += 100) {
    const found = await Promise.all(acked.slice(i, i + 100).map(async (id) => {
      const res = await fetch(`${restarted.url}/plants/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })
      return res.status === 200 && (await res.json() as { name: string }).name === `plant ${id}`
    }))
    found.forEach((ok, j) => { if (!ok) missing.push(acked[i + j]) })
  }
  t.same(missing, [], `all ${acked.length} acknowledged plants survived`)
})
