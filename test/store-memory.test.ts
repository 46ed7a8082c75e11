import t from 'tap'
import { storeSuite } from './helpers/store-suite.js'

storeSuite(t, async () => 'memory:')
