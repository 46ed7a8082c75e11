/**
 * Whole milliseconds on the monotonic clock, which nothing sets back: what every window,
 * pause and deadline of the service is timed with. Timed on the wall clock (Date.now), a
 * window lasted as much longer as the machine's clock was set back (an NTP correction, a
 * virtual machine restored from a snapshot): a token that had spent its second's budget
 * was refused for the hour the clock went back. Whole, because a sum of fractions can come
 * out a hair over a window, and a Retry-After rounded up one second too many. The wall
 * clock stays for what must be one: expiries, log times, timestamps sent and times stored.
 */
export function monotonicMs (): number {
  return Math.floor(performance.now())
}
