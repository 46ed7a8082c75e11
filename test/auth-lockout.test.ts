import t from 'tap'
import { Lockout } from '../src/plugins/auth-lockout.ts'

// The bound on the addresses tracked cannot be reached through HTTP in a test's time
// (100,000 addresses); a small bound shows what a flood of addresses does to the counts.
t.test('past the addresses it tracks, the lockout forgets ended windows first, then the oldest', async (t) => {
  const lockout = new Lockout(2, 1000, 3)
  const at = 1_000_000
  lockout.fail('192.0.2.1', at)
  lockout.fail('192.0.2.1', at)
  t.ok(lockout.retryAfter('192.0.2.1', at) > 0, 'two failures lock the first address out')
  lockout.fail('192.0.2.2', at + 10)
  lockout.fail('192.0.2.3', at + 20)
  t.ok(lockout.retryAfter('192.0.2.1', at + 30) > 0, 'three addresses fit: nothing is forgotten yet')

  lockout.fail('192.0.2.4', at + 30) // a fourth, while every window is running: the oldest goes
  t.equal(lockout.retryAfter('192.0.2.1', at + 30), 0, 'the oldest window is forgotten')
  lockout.fail('192.0.2.4', at + 40)
  t.ok(lockout.retryAfter('192.0.2.4', at + 40) > 0, 'the newest is counted')

  lockout.fail('192.0.2.2', at + 50)
  t.ok(lockout.retryAfter('192.0.2.2', at + 50) > 0, 'a window kept keeps its count')
  // Later, the first two windows have ended: a new address sweeps them, not a running one.
  lockout.fail('192.0.2.5', at + 1015)
  t.ok(lockout.retryAfter('192.0.2.4', at + 1015) > 0, 'a running window survives the sweep')
  t.equal(lockout.retryAfter('192.0.2.2', at + 1015), 0, 'an ended window is not a lockout')
})
