import t from 'tap'
import { fuzzRoutes } from '../helpers/fuzz.ts'

/**
 * Bad input against every built route of the OpenAPI document (test/helpers/fuzz.ts), in three files
 * so the runner spreads them over its jobs: as one file it had grown past 400 s on a loaded machine. This one: generated query strings on the lists.
 */
// Grows with every route of the schema: past tap's 120 s default on a loaded 2-core machine.
t.setTimeout(360_000)

t.test('bad input (queries) on every route of the schema: never a 5xx, always the error shape, no change when rejected', (t) => fuzzRoutes(t, 'queries'))
