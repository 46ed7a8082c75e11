import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { killDuringUpdates } from '../helpers/acked-updates.ts'
import { sqliteHistory } from '../helpers/event-history.ts'

t.test('kill -9 during updates and deletes on SQLite: no acknowledged change lost, no event without its change', async (t) => {
  const file = `${t.testdir()}/plants.db`
  const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${file}`, WEBHOOK_ALLOW_PRIVATE: 'true', MAX_EVENT_LOOP_DELAY_MS: '0' }
  await killDuringUpdates(t, env, async () => sqliteHistory(file))
})
