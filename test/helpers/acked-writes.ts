import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import type { RunningServer } from './server.ts'

export interface CreateStream {
  /** The ids whose create was answered 200. */
  acked: number[]
  /** Requests left without an answer: the connection died with the process. */
  failed: number
  /** Each answer other than a 200, as "status body", and how many there were. */
  refused: Map<string, number>
}

export interface Interruption {
  clients: number
  /** How many creates are acknowledged before every process is sent `signal`. */
  ackedBefore: number
  signal: NodeJS.Signals
  /** Once every client stopped and every process exited: a service on the same store. */
  restart: () => Promise<RunningServer>
}

/**
 * The check that acknowledged writes survive. Clients create plants one after another,
 * each on its own ids (client i on servers[i % servers.length]), until `ackedBefore` are
 * acknowledged; then every process is sent `signal`, and each client stops at its first
 * request left without an answer. On the service `restart` gives, every acknowledged
 * plant must be found as it was created. Resolves with what the clients saw.
 */
export async function ackedPlantsSurvive (t: Test, servers: RunningServer[], { clients, ackedBefore, signal, restart }: Interruption): Promise<CreateStream> {
  const stream: CreateStream = { acked: [], failed: 0, refused: new Map() }
  const running = Array.from({ length: clients }, async (_, client) => {
    const server = servers[client % servers.length]
    for (let i = 0; ; i++) {
      const id = (client + 1) * 10_000_000 + i
      let res
      try {
        res = await server.request('POST', '/plants', { body: { id, name: `plant ${id}` } })
      } catch {
        stream.failed++
        return
      }
      const answer = `${res.statusCode} ${res.body}`
      if (res.statusCode === 200) stream.acked.push(id)
      else stream.refused.set(answer, (stream.refused.get(answer) ?? 0) + 1)
    }
  })
  while (stream.acked.length < ackedBefore) await sleep(5)
  for (const server of servers) server.child.kill(signal)
  await Promise.all(running)
  await Promise.all(servers.map(async (server) => await server.exited))

  const restarted = await restart()
  const { acked } = stream
  const missing: number[] = []
  for (let i = 0; i < acked.length; i += 100) {
    const found = await Promise.all(acked.slice(i, i + 100).map(async (id) => {
      const res = await restarted.request('GET', `/plants/${id}`)
      return res.statusCode === 200 && res.json().name === `plant ${id}`
    }))
    found.forEach((ok, j) => { if (!ok) missing.push(acked[i + j]) })
  }
  t.same(missing, [], `all ${acked.length} acknowledged plants survived`)
  return stream
}
