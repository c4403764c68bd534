import t from 'tap'
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts'
import { freshDatabase } from '../helpers/db.ts'
import { eventStoreContract } from './contract.ts'

eventStoreContract(t, async (t) => {
  const { pool } = await freshDatabase(t, { poolSize: 12 })
  const store = createPostgresEventStore({ pool, pollIntervalMs: 100 })
  t.teardown(() => store.close())
  return store
})
