import t from 'tap'
import { outboxSuite } from './helpers/outbox-suite.ts'
import { storeSuite } from './helpers/store-suite.ts'

storeSuite(t, async (t) => `sqlite:${t.testdir()}/plants.db`)
outboxSuite(t, async (t) => `sqlite:${t.testdir()}/plants.db`)
