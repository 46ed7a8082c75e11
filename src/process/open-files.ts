import { readFileSync } from 'node:fs'

/**
 * How many files this process may have open (its soft RLIMIT_NOFILE, which Node raises
 * to the hard limit as it starts), read from /proc; undefined where there is no /proc.
 */
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
