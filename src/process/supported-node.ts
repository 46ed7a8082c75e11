import { NODE_RANGE } from './project.ts'

/**
 * Why this Node cannot run the service, or undefined. Only an older Node is refused: its
 * better-sqlite3 binary dies of a segmentation fault, silently; a newer one may run.
 */
export function unsupportedNode (version: string, range: string): string | undefined {
  const oldest = [...range.matchAll(/(\d+)\.(\d+)\.(\d+)/g)].map((found) => found.slice(1).map(Number)).sort(compare)[0]
  const running = version.replace(/^v/, '').split('.').map(Number)
  if (oldest === undefined || compare(running, oldest) >= 0) return undefined
  return `Node ${version} is older than the service supports (${range}); ` +
    'run it with the Node that npm ci installs into node_modules/.bin (npm start does)'
}

function compare (a: number[], b: number[]): number {
  return (a[0] - b[0]) || (a[1] - b[1]) || (a[2] - b[2])
}

// Imported first by server.ts: runs before the store's driver loads.
const refusal = unsupportedNode(process.version, NODE_RANGE)
if (refusal !== undefined) {
  process.stderr.write(`plant-store: cannot start: ${refusal}\n`)
  process.exit(1)
}
