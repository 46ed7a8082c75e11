import { readFileSync } from 'node:fs'

/** The soft RLIMIT_NOFILE (Node raises it to the hard limit) from /proc; undefined without /proc. */
export function openFileLimit (): number | undefined {
  let text: string
  try {
    text = readFileSync('/proc/self/limits', 'utf8')
  } catch {
    return undefined
  }
  const soft = /^Max open files\s+(\d+)/m.exec(text)
  return soft === null ? undefined : Number(soft[1])
}
