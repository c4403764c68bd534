/* global console, process */
// One sample: the projection units' owners and the backends' wait events (scale.sh's database).
import { createRequire } from 'node:module'
const pg = createRequire(process.cwd() + '/package.json')('pg')
const c = new pg.Client('postgres://postgres@127.0.0.1:5439/crm')
await c.connect()
const at = new Date().toISOString().slice(11, 19)
const waits = await c.query(`SELECT state, coalesce(wait_event_type,'-') t, coalesce(wait_event,'-') e, count(*)::int n FROM pg_stat_activity WHERE datname='crm' AND pid <> pg_backend_pid() GROUP BY 1,2,3 ORDER BY n DESC`)
let units = { rows: [] }
try { units = await c.query(`SELECT split_part(owner, ':', 2) pid, string_agg(name, ',' ORDER BY name) names FROM projection_leases WHERE lease_until > now() GROUP BY 1`) } catch {
  // Before the first server made its tables: no units yet.
}
console.log(JSON.stringify({ at, waits: waits.rows.map((r) => `${r.n} ${r.state}/${r.t}/${r.e}`), units: units.rows }))
await c.end()
