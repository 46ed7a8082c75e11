import t from 'tap'
import { TOKEN } from '../helpers/app.ts'
import { ackedPlantsSurvive } from '../helpers/acked-writes.ts'
import { startServer } from '../helpers/server.ts'

t.test('kill -9 in the middle of a stream of creates loses no acknowledged plant', async (t) => {
  const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${t.testdir()}/plants.db` }
  const server = await startServer(t, env)
  const restart = async () => await startServer(t, env)
  const { failed } = await ackedPlantsSurvive(t, [server], { clients: 32, ackedBefore: 1500, signal: 'SIGKILL', restart })
  t.ok(failed > 0, `${failed} requests were in flight when the process died`)
})
