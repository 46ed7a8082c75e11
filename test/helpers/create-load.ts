import type { RunningServer } from './server.ts'

export interface CreateLoad {
  /** The ids whose create was answered 200, in the order of their answers. */
  acked: number[]
  /** Stops the clients, each after its request in flight. */
  stop: () => Promise<void>
}

/**
 * Creates plants named `plant <id>` from `clients` clients, one request after another each,
 * on ids of their own (from 1), until stopped: a service kept busy with writes.
 */
export function createLoad (server: RunningServer, clients = 4): CreateLoad {
  const acked: number[] = []
  const stopped = new AbortController()
  const running = Array.from({ length: clients }, async (_, client) => {
    for (let id = client + 1; !stopped.signal.aborted; id += clients) {
      if ((await server.request('POST', '/plants', { body: { id, name: `plant ${id}` } })).statusCode === 200) acked.push(id)
    }
  })
  return {
    acked,
    stop: async () => {
      stopped.abort()
      await Promise.all(running)
    }
  }
}
