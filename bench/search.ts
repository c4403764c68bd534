/**
 * Workload 6: global search at scale (issue 19). BENCH_SEARCH_RECORDS (default 100000) leads, deals,
 * accounts, contacts, solutions and tasks each in one organization, named from a few dozen first names,
 * last names and company words (so common words match thousands of records, as real names do).
 * Seeding: one record of each kind is created over HTTP, and its created event is the template
 * that one INSERT … SELECT per kind copies into the log with other ids and names (no name claims:
 * the read side does not need them); the server's projections then apply them as they would any
 * append. Then GET /api/search/ over a rotating mix of queries (2-letter prefixes, common names,
 * company words, full names, emails, typos, fragments, misses), by 1 and 8 clients as the admin and
 * by 1 as a member (who sees half the leads, deals and tasks), and each query alone, sequentially.
 */
import { sql } from 'kysely'
import type { BenchApp } from './app.ts'
import { cannon } from './cannon.ts'
import type { Cell } from './measure.ts'
import { progress } from './progress.ts'

const FIRST = ['James', 'Mary', 'John', 'Patricia', 'Robert', 'Jennifer', 'Michael', 'Linda', 'William', 'Elizabeth', 'David', 'Barbara', 'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Charles', 'Karen', 'Chris', 'Nancy', 'Daniel', 'Lisa', 'Matthew', 'Betty', 'Anthony', 'Margaret', 'Mark', 'Sandra', 'Donald', 'Ashley', 'Steven', 'Kimberly', 'Paul', 'Emily', 'Andrew', 'Donna', 'Joshua', 'Michelle', 'Kenneth', 'Carol', 'Kevin', 'Amanda', 'Brian', 'Dorothy', 'George', 'Melissa', 'Timothy', 'Deborah']
const LAST = ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson', 'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores', 'Green', 'Adams', 'Nelson', 'Baker', 'Hall', 'Rivera', 'Campbell', 'Mitchell', 'Carter', 'Roberts']
const COMPANY = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Stark', 'Wayne', 'Wonka', 'Hooli', 'Vandelay', 'Soylent', 'Cyberdyne', 'Tyrell', 'Aperture', 'Massive', 'Dynamic', 'Oceanic', 'Pied', 'Piper', 'Monarch', 'Sterling', 'Prestige', 'Nakatomi', 'Gringotts', 'Oscorp', 'Virtucon', 'Zorg', 'Blue', 'Red', 'Northern', 'Pacific']
const SUFFIX = ['Corp', 'Industries', 'Labs', 'Systems', 'Holdings', 'Group', 'Partners', 'Logistics', 'Foods', 'Energy']

/** The mix each cell rotates through: what people type into a palette, common and rare. */
export const SEARCH_QUERIES = ['ja', 'ac', 'james', 'smith', 'acme', 'acme corp', 'mary smith', 'john.johnson', 'globex 4242', 'renewal', 'vandelay ind', 'jmaes', 'nakatomy', 'ndustr', 'password', 'zzqx']

type Kind = { kind: string; create: [string, object]; stream: string; idKey: string; fields: string }

// Per kind: how the template record is made, and the SQL (over fn, ln, co, n, assignee) of the fields each copy gets.
const KINDS: Kind[] = [
  { kind: 'lead', create: ['/api/leads/', { first_name: 'Template', last_name: 'Lead' }], stream: 'lead', idKey: 'lead_id', fields: `'first_name', fn, 'last_name', ln, 'email', lower(fn || '.' || ln || n || '@example.com'), 'company_name', co, 'assigned_to', jsonb_build_array(assignee)` },
  { kind: 'deal', create: ['/api/opportunities/', { name: 'Template deal' }], stream: 'opportunity', idKey: 'opportunity_id', fields: `'name', co || ' renewal ' || n, 'description', 'Renewal of the ' || co || ' contract', 'assigned_to', jsonb_build_array(assignee)` },
  { kind: 'account', create: ['/api/accounts/', { name: 'Template account' }], stream: 'account', idKey: 'account_id', fields: `'name', co || ' ' || n, 'email', 'sales' || n || '@' || lower(split_part(co, ' ', 1)) || '.example'` },
  { kind: 'contact', create: ['/api/contacts/', { first_name: 'Template', last_name: 'Contact' }], stream: 'contact', idKey: 'contact_id', fields: `'first_name', fn, 'last_name', ln, 'email', lower(ln || '.' || fn || n || '@example.org'), 'organization', co` },
  { kind: 'solution', create: ['/api/cases/solutions/', { title: 'Template solution' }], stream: 'solution', idKey: 'solution_id', fields: `'title', 'Reset a ' || co || ' password ' || n, 'description', 'Steps for ' || fn || ' ' || ln || ' at ' || co` },
  { kind: 'task', create: ['/api/tasks/', { title: 'Template task' }], stream: 'task', idKey: 'task_id', fields: `'title', 'Call ' || fn || ' ' || ln || ' at ' || co, 'description', 'Follow up ' || n, 'assigned_to', jsonb_build_array(assignee)` },
]

export type SearchSeeding = { perKind: number; seconds: number; eventsPerSec: number }

async function seedSearch(bench: BenchApp, perKind: number): Promise<SearchSeeding> {
  const t0 = performance.now()
  const member = bench.member.profileId
  // Every template first: a create waits for the projections, which the bulk copies keep busy.
  const templates = []
  for (const { create, stream } of KINDS) {
    const id = (await bench.call('POST', create[0], create[1])).body.id as string
    const template = await sql<{ event_type: string; schema_version: number; data: object; metadata: object }>`SELECT event_type, schema_version, data, metadata FROM events WHERE stream_name = ${`${stream}-${id}`} AND stream_revision = 0`.execute(bench.db)
    templates.push(template.rows[0]!)
  }
  for (const [i, { kind, stream, idKey, fields }] of KINDS.entries()) {
    progress(`seeding search: copying ${perKind.toLocaleString('en-US')} ${kind} events into the log`)
    const { event_type, schema_version, data, metadata } = templates[i]!
    await sql`INSERT INTO events (stream_name, stream_revision, event_id, event_type, schema_version, data, metadata)
      SELECT ${`${stream}-`} || id, 0, gen_random_uuid(), ${event_type}, ${schema_version}, ${JSON.stringify(data)}::jsonb || jsonb_build_object(${sql.lit(idKey)}, id, ${sql.raw(fields)}), ${JSON.stringify(metadata)}::jsonb
      FROM (SELECT gen_random_uuid() AS id, n,
              (${FIRST}::text[])[1 + n % ${FIRST.length}] AS fn,
              (${LAST}::text[])[1 + (n / 7) % ${LAST.length}] AS ln,
              (${COMPANY}::text[])[1 + (n / 3) % ${COMPANY.length}] || ' ' || (${SUFFIX}::text[])[1 + n % ${SUFFIX.length}] AS co,
              CASE WHEN n % 2 = 0 THEN ${bench.admin.profileId}::uuid ELSE ${member}::uuid END AS assignee
            FROM generate_series(1, ${perKind}::int) n) s`.execute(bench.db)
  }
  const marker = await bench.store.appendToStream(`bench-marker-${Date.now()}`, [{ type: 'BenchMarker', data: {} }])
  await bench.waitForProjections(marker.position, 60 * 60_000)
  await sql`ANALYZE`.execute(bench.db)
  const seconds = (performance.now() - t0) / 1000
  return { perKind, seconds, eventsPerSec: (perKind * KINDS.length) / seconds }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

/** Each query of the mix alone, `times` times in a row: which one is the slowest (p99 of its own). */
async function perQuery(bench: BenchApp, times: number): Promise<{ q: string; hits: number; p50Ms: number; p99Ms: number }[]> {
  const rows = []
  for (const q of SEARCH_QUERIES) {
    const latencies: number[] = []
    let hits = 0
    for (let i = 0; i < times; i++) {
      const t0 = performance.now()
      hits = (await bench.call('GET', `/api/search/?q=${encodeURIComponent(q)}`)).body.results.length
      latencies.push(performance.now() - t0)
    }
    latencies.sort((a, b) => a - b)
    rows.push({ q, hits, p50Ms: pct(latencies, 0.5), p99Ms: pct(latencies, 0.99) })
  }
  return rows
}

export type SearchResult = { cells: Cell[]; seeding: SearchSeeding; perQuery: Awaited<ReturnType<typeof perQuery>> }

export async function searchCells(bench: BenchApp, perKind: number, seconds: number): Promise<SearchResult> {
  const seeding = await seedSearch(bench, perKind)
  const workload = (who: string) => `GET search (${SEARCH_QUERIES.length}-query mix, ${who}) @${perKind}×${KINDS.length}`
  const rotating = (headers: object) => {
    let n = 0
    return { method: 'GET' as const, setupRequest: (request: object) => ({ ...request, headers: { ...headers }, path: `/api/search/?q=${encodeURIComponent(SEARCH_QUERIES[n++ % SEARCH_QUERIES.length]!)}` }) }
  }
  const cells: Cell[] = []
  for (const clients of [1, 8]) cells.push(await cannon(bench, workload('admin'), clients, seconds, rotating(bench.admin.headers)))
  cells.push(await cannon(bench, workload('member'), 1, seconds, rotating(bench.member.headers)))
  return { cells, seeding, perQuery: await perQuery(bench, 30) }
}
