import fc from 'fast-check'
import t, { type Test } from 'tap'

function integerFromEnv (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, not ${raw}`)
  return value
}

/**
 * The seed and the runs per property of a property-based test file: FUZZ_SEED replays
 * a run (random when unset), FUZZ_RUNS sets how many cases each property draws
 * (npm run fuzz sets many more). Both are printed first, so any run can be replayed.
 */
export function fuzzSettings (defaultRuns: number): { seed: number, numRuns: number } {
  const seed = integerFromEnv('FUZZ_SEED', Math.floor(Math.random() * 0x80000000))
  const numRuns = integerFromEnv('FUZZ_RUNS', defaultRuns)
  if (numRuns < 1) throw new Error('FUZZ_RUNS must be at least 1')
  t.comment(`FUZZ_SEED=${seed} FUZZ_RUNS=${numRuns}`)
  return { seed, numRuns }
}

/**
 * Checks a property over `numRuns` generated cases drawn from `seed`, and reports it to
 * tap: a pass naming the seed, or a failure with the violation and fast-check's message
 * (the seed, the replay path and the shrunk counterexample). `endOnFailure` skips the
 * shrinking, for properties whose failing runs take seconds each.
 */
export async function propertyHolds (t: Test, property: fc.IAsyncPropertyWithHooks<any>, seed: number, numRuns: number, reportedSeed = seed, endOnFailure = false): Promise<void> {
  try {
    await fc.assert(property, { seed, numRuns, endOnFailure })
    t.pass(`${numRuns} generated requests (FUZZ_SEED=${reportedSeed})`)
  } catch (err) {
    // The violation itself is the error's cause.
    const { message, cause } = err as Error
    t.fail(`${cause instanceof Error ? cause.message : String(cause)}\nFUZZ_SEED=${reportedSeed} FUZZ_RUNS=${numRuns}: ${message}`)
  }
}
