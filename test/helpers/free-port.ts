/**
 * A free TCP port on 127.0.0.1, and a start that tries another when it was taken, for the
 * programs we start ourselves: the bench's servers, the throwaway PostgreSQL cluster and
 * PgBouncer (tests and bench). Here, because both test/ and bench/ use it and neither should
 * import the other.
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

/**
 * Starts a program with `start` on a free port. When the start fails
 * because another process took the port first (`portTaken` reads the program's log, and
 * makes it ready for the next start), it tries again on another port, three times at most.
 */
export async function startOnFreePort (start: (port: number) => Promise<void>, portTaken: () => Promise<boolean>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    try {
      await start(port)
      return
    } catch (err) {
      if (attempt === 3 || !await portTaken()) throw err
    }
  }
}
