import t from 'tap'
import { storeSuite } from './helpers/store-suite.ts'

storeSuite(t, async (t) => `sqlite:${t.testdir()}/plants.db`)
