import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Calls `attempt` every `everyMs` until `done` accepts its value or `timeoutMs` have
 * passed; returns the last value and how long it took.
 */
export async function retryUntil<T> (
  attempt: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  everyMs = 100
): Promise<{ value: T, ms: number }> {
  const started = Date.now()
  for (;;) {
    const value = await attempt()
    const ms = Date.now() - started
    if (done(value) || ms > timeoutMs) return { value, ms }
    await sleep(everyMs)
  }
}
