import t from 'tap'
import { createKurrentDbEventStore } from '../../src/eventstore/kurrentdb.ts'
import { eventStoreContract } from './contract.ts'

// No KurrentDB runs in the default suite: `docker compose up -d kurrentdb`, then EVENTSTORE_URL=esdb://localhost:2113?tls=false.
const connectionString = process.env.EVENTSTORE_URL
if (!connectionString) {
  t.plan(0, 'EVENTSTORE_URL is not set')
} else {
  eventStoreContract(t, async (t) => {
    const store = createKurrentDbEventStore({ connectionString })
    t.teardown(() => store.close())
    return store
  })
}
