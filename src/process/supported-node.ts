import { NODE_RANGE } from './project.ts'

/**
 * Why this Node cannot run the service, or undefined when it can. Only a Node older than
 * the oldest in the range is refused: under Node 20, better-sqlite3's binary loads and
 * the process dies of a segmentation fault at the first statement, without a word. A
 * newer Node than the range names is let run.
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

// Imported by server.ts before any other module, so that this runs before the store's
// driver is loaded.
const refusal = unsupportedNode(process.version, NODE_RANGE)
if (refusal !== undefined) {
  process.stderr.write(`plant-store: cannot start: ${refusal}\n`)
  process.exit(1)
}
