import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { killDuringUpdates } from '../helpers/acked-updates.ts'
import { postgresHistory } from '../helpers/event-history.ts'
import { postgresUnavailable, startPostgres } from '../helpers/postgres-cluster.ts'

t.test('kill -9 during updates and deletes on PostgreSQL: no acknowledged change lost, no event without its change', { skip: postgresUnavailable() }, async (t) => {
  const url = await (await startPostgres(t)).createDatabase('crash_updates')
  const env = { API_TOKENS: TOKEN, DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true', MAX_EVENT_LOOP_DELAY_MS: '0' }
  await killDuringUpdates(t, env, async () => await postgresHistory(url))
})
