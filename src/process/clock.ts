/**
 * Whole milliseconds on the monotonic clock, for every window and deadline: a wall clock
 * set back would stretch them. Whole, so sums of fractions cannot overrun a window.
 */
export function monotonicMs (): number {
  return Math.floor(performance.now())
}
