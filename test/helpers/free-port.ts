/**
 * A free TCP port on 127.0.0.1, for programs we start ourselves: the bench's servers and
 * the throwaway PostgreSQL cluster (tests and bench). One function for both, here rather
 * than in test/ or bench/, because both use it and neither should import the other.
 */
import { createServer } from 'node:net'

/**
 * A port the OS handed out a moment ago and that is closed again: free now, but another
 * process may take it before the caller binds it, so callers that can, retry.
 */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no port from the OS')
  return address.port
}
