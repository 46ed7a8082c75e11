import t from 'tap'
import { storeSuite } from './helpers/store-suite.js'

storeSuite(t, async (t) => `sqlite:${t.testdir()}/plants.db`)
