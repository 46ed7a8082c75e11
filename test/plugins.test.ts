import Fastify from 'fastify'
import t from 'tap'
import { loadConfig } from '../src/config.ts'
import plants from '../src/plants/plugin.ts'
import metrics from '../src/plugins/metrics.ts'
import readiness from '../src/plugins/readiness.ts'
import health from '../src/routes/health.ts'
import metricsRoute from '../src/routes/metrics.ts'

const config = loadConfig({ API_TOKENS: 'test-token-0123456789', DATABASE_URL: 'memory:' })

// Each plugin declares what it needs of the app: registered in the wrong order, the app
// refuses to start with a message naming what is missing, rather than a TypeError later.
t.test('a plugin registered before what it needs stops the boot, naming the missing plugin', async (t) => {
  const cases: Array<[string, (app: ReturnType<typeof Fastify>) => void, RegExp]> = [
    ['metrics without the config', (app) => { app.register(metrics) }, /decorator 'config' required by 'metrics' is not present/],
    ['plants without metrics', (app) => { app.register(plants) }, /dependency 'metrics' of plugin 'plants'/],
    ['plants without auth', (app) => {
      app.register(metrics)
      app.register(readiness)
      app.register(plants)
    }, /dependency 'auth' of plugin 'plants'/],
    ['the health routes without readiness', (app) => { app.register(health) }, /dependency 'readiness' of plugin 'health-routes'/],
    ['the metrics route without metrics', (app) => { app.register(metricsRoute, { requireToken: false }) }, /dependency 'metrics' of plugin 'metrics-route'/]
  ]
  for (const [what, register, message] of cases) {
    const app = Fastify()
    if (!what.endsWith('without the config')) app.decorate('config', config)
    register(app)
    await t.rejects(async () => await app.ready(), message, what)
    await app.close().catch(() => {})
  }
})
