import { sql } from 'kysely'
import type { Transaction } from 'kysely'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import type { FreshTables } from '../../db/copy-rows.ts'
import { insertRowsOnce, updateRows } from '../../db/insert-rows.ts'
import { BATCH_FROM } from '../kernel/projector.ts'
import { domainEventOf } from '../../events/versions.ts'
import { READ_MODEL_ERASED } from '../../privacy/seal.ts'
import { withErasure } from '../privacy/erasing.ts'
import type { ErasedSubject, ErasingProjector } from '../privacy/erasing.ts'
import { changesOf, pick } from './search-documents.ts'
import { isRestricted } from '../../visibility/policy.ts'
import type { Fields, SearchKindSpec } from './search-documents.ts'
import type { Database, Db } from '../../db/database.ts'

/**
 * Global search's read model (issue 19): one document per live record of each kind a manifest
 * declares (`search`: leads, deals, accounts, contacts, solutions and tasks), fed by its module's
 * events. A document holds what the palette shows (title, subtitle), what is matched (names,
 * terms, and `tsv`, their full-text vector, computed by PostgreSQL), who may see it (the visibility
 * of its module's list), and the fields it was derived from, so a change recomputes it. A deal
 * carries its account's name, kept here from the account's own events (the `deal` and `account`
 * kinds, by name). Deleted records have no document.
 */
export const SEARCH_TABLE = 'search_documents'

type KindSpec = SearchKindSpec
type Action = { spec: KindSpec; action: 'created' | 'updated' | 'deleted' }

/** What each event the kinds declare does to their documents. */
function actionsOf(kinds: readonly KindSpec[]): Map<string, Action> {
  const actions = new Map<string, Action>()
  for (const spec of kinds) {
    for (const action of ['created', 'updated', 'deleted'] as const) if (spec.events[action]) actions.set(spec.events[action], { spec, action })
    for (const type of Object.keys(spec.alsoUpdatedBy ?? {})) actions.set(type, { spec, action: 'updated' })
  }
  return actions
}

type EventData = Fields & { at: string }

/** A member's visibility as a word of their documents' `tsv`: 'v' and the profile id's hex digits (projections/search/queries.ts). */
export const viewerWord = (profileId: string) => `v${profileId.replaceAll('-', '')}`

/** Who may see a document besides admins: its creator and assignees, for the kinds whose lists are restricted. */
function viewersOf(restricted: boolean, createdBy: string | null, assignedTo: readonly string[]): string[] {
  if (!restricted) return []
  return [...new Set([createdBy, ...assignedTo].filter((id): id is string => Boolean(id)).map(viewerWord))]
}

/** The extension may be missing (migrations/…-pg-trgm.ts): then no trigram index and no fuzzy tier. */
export async function hasTrigrams(db: Db): Promise<boolean> {
  const { rows } = await sql<{ present: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS present`.execute(db)
  return rows[0]!.present
}

/**
 * One partition per kind (the search_documents table is partitioned by kind): each has its own
 * planner statistics, so a word frequent among deals and absent from leads is estimated as such in
 * each (with one table, the planner scanned every lead for a word only deals hold), and its own
 * indexes. Queries name the kind as a literal and read only its partition.
 */
export const partitionOf = <K extends string>(kind: K) => `${SEARCH_TABLE}_${kind}` as const

async function createTables(db: Db, kinds: readonly KindSpec[]): Promise<void> {
  await db.schema
    .createTable(SEARCH_TABLE)
    .addColumn('id', 'uuid', (c) => c.notNull())
    .addColumn('org_id', 'uuid', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('subtitle', 'text', (c) => c.notNull())
    .addColumn('names', 'text', (c) => c.notNull())
    .addColumn('terms', 'text', (c) => c.notNull())
    .addColumn('fields', 'jsonb', (c) => c.notNull())
    .addColumn('account_id', 'uuid')
    .addColumn('account_name', 'text')
    .addColumn('created_by', 'uuid')
    .addColumn('assigned_to', sql`uuid[]`, (c) => c.notNull())
    .addColumn('restricted', 'boolean', (c) => c.notNull())
    .addColumn('viewers', sql`text[]`, (c) => c.notNull())
    // 'simple': names and emails are not stemmed nor dropped as stop words, whatever their language.
    // The viewers' words are lexemes as they are (array_to_tsvector), matched only by a member's query.
    .addColumn('tsv', sql`tsvector`, (c) =>
      c.generatedAlwaysAs(sql`setweight(to_tsvector('simple'::regconfig, names), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(account_name, '') || ' ' || terms), 'B') || array_to_tsvector(viewers)`).stored(),
    )
    .modifyEnd(sql`PARTITION BY LIST (kind)`)
    .execute()
  for (const { kind } of kinds) {
    await sql`CREATE TABLE ${sql.id(partitionOf(kind))} PARTITION OF search_documents (PRIMARY KEY (id)) FOR VALUES IN (${sql.lit(kind)})`.execute(db)
  }
  // Indexes on the parent are made on every partition. Apply renames deals' accounts by account_id.
  await sql`CREATE INDEX search_deal_account ON search_documents (account_id) WHERE account_id IS NOT NULL`.execute(db)
}

/** The searches' indexes (two of them GIN, the dearest to maintain row by row): apply never reads through them. */
async function createIndexes(db: Db): Promise<void> {
  // Name prefixes in byte order: LIKE 'ab%' is a range of it, and its order the answer's.
  await sql`CREATE INDEX search_name_prefix ON search_documents (org_id, lower(names) COLLATE "C")`.execute(db)
  await sql`CREATE INDEX search_words ON search_documents USING gin (tsv) WITH (fastupdate = off)`.execute(db)
  // viewers as a second column: a member's fuzzy match is one scan of this index, their records only.
  if (await hasTrigrams(db)) await sql`CREATE INDEX search_name_trigrams ON search_documents USING gin (names gin_trgm_ops, viewers) WITH (fastupdate = off)`.execute(db)
}

function documentColumns(spec: KindSpec, fields: Fields, createdBy: string | null) {
  const assignedTo = (fields.assigned_to as string[] | undefined) ?? []
  return { ...spec.document(fields), account_id: (fields.account as string | null | undefined) ?? null, assigned_to: assignedTo, viewers: viewersOf(isRestricted(spec.visibility), createdBy, assignedTo) }
}

function rowOf(spec: KindSpec, id: string, data: EventData): Record<string, unknown> {
  const fields = pick(spec, data)
  const createdBy = (data.created_by as string | undefined) ?? null
  return { id, org_id: data.org_id, kind: spec.kind, ...documentColumns(spec, fields, createdBy), fields, account_name: null, created_by: createdBy, restricted: isRestricted(spec.visibility) }
}

/** Deals take the name of their account's document (null when it has none, or it was deleted). */
async function lookUpAccountNames(trx: Db, dealIds: readonly string[]): Promise<void> {
  if (!dealIds.length) return
  await sql`UPDATE search_documents_deal d SET account_name = a.title FROM search_documents_account a
    WHERE d.id = ANY(${dealIds}::uuid[]) AND a.id = d.account_id AND a.org_id = d.org_id`.execute(trx)
}

async function renameAccountOfDeals(trx: Db, accountId: string, name: string | null): Promise<void> {
  await trx.updateTable(partitionOf('deal')).set({ account_name: name }).where('account_id', '=', accountId).execute()
}

async function insertDocuments(trx: Db, spec: KindSpec, events: readonly RecordedEvent[], fresh?: FreshTables): Promise<void> {
  const rows = events.map((recorded) => rowOf(spec, spec.streams.idOf(recorded.streamName), domainEventOf<{ type: string; data: EventData }>(recorded).data))
  await insertRowsOnce(trx, partitionOf(spec.kind), 'id', rows, fresh)
  if (spec.kind === 'deal') await lookUpAccountNames(trx, rows.filter((row) => row.account_id).map((row) => row.id as string))
}

const changedBy = (spec: KindSpec, recorded: RecordedEvent): Fields => pick(spec, changesOf(spec, recorded.type, domainEventOf<{ type: string; data: EventData }>(recorded).data))

/** An edit that reaches other documents (a deal's account, an account's name) is applied alone; every other edit can share a run. */
const reachesOthers = (spec: KindSpec, changed: Fields) => (spec.kind === 'deal' && 'account' in changed) || (spec.kind === 'account' && 'name' in changed)

/**
 * A run of edits of one kind's documents (board moves and PATCHes under load): the documents read
 * once, each one's changes merged in log order, one UPDATE, instead of a read and an UPDATE per
 * event. The stored fields merged with the changes: applying the same changes twice gives the same documents.
 */
async function updateDocuments(trx: Db, spec: KindSpec, all: readonly { id: string; changed: Fields }[]): Promise<void> {
  const changes = all.filter(({ changed }) => Object.keys(changed).length)
  if (!changes.length) return
  const table = partitionOf(spec.kind)
  const ids = [...new Set(changes.map((change) => change.id))]
  const stored = await trx.selectFrom(table).select(['id', 'fields', 'created_by']).where('id', 'in', ids).execute()
  const documents = new Map(stored.map((row) => [row.id as string, { fields: row.fields as Fields, createdBy: row.created_by as string | null }]))
  for (const { id, changed } of changes) {
    const document = documents.get(id)
    if (document) document.fields = { ...document.fields, ...changed }
  }
  await updateRows(trx, table, 'id', [...documents].map(([key, { fields, createdBy }]) => ({ key, set: { ...documentColumns(spec, fields, createdBy), fields } })))
}

async function apply(trx: Db, actions: ReadonlyMap<string, Action>, recorded: RecordedEvent): Promise<void> {
  const { spec, action } = actions.get(recorded.type)!
  const id = spec.streams.idOf(recorded.streamName)
  const table = partitionOf(spec.kind)
  if (action === 'created') return insertDocuments(trx, spec, [recorded])
  if (action === 'deleted') {
    await trx.deleteFrom(table).where('id', '=', id).execute()
    if (spec.kind === 'account') await renameAccountOfDeals(trx, id, null)
    return
  }
  const changed = changedBy(spec, recorded)
  if (!Object.keys(changed).length) return
  const row = await trx.selectFrom(table).select(['fields', 'created_by']).where('id', '=', id).executeTakeFirst()
  if (!row) return
  // The stored fields merged with the change: applying the same change twice gives the same document.
  const fields = { ...(row.fields as Fields), ...changed }
  await trx.updateTable(table).set({ ...documentColumns(spec, fields, row.created_by as string | null), fields: JSON.stringify(fields) }).where('id', '=', id).execute()
  if (spec.kind === 'deal' && 'account' in changed) {
    await trx.updateTable(table).set({ account_name: null }).where('id', '=', id).execute()
    await lookUpAccountNames(trx, [id])
  }
  if (spec.kind === 'account' && 'name' in changed) await renameAccountOfDeals(trx, id, String(fields.name))
}

/**
 * An erased person's document (issue 31): the personal fields it was derived from blanked, and its
 * text derived again from them, as a rebuild derives it from the person's erased events.
 */
async function eraseDocument(trx: Db, kinds: readonly KindSpec[], subject: ErasedSubject): Promise<void> {
  for (const spec of kinds.filter((candidate) => candidate.kind === subject.kind)) {
    const table = partitionOf(spec.kind)
    const row = await trx.selectFrom(table).select(['fields', 'created_by']).where('id', '=', subject.id).executeTakeFirst()
    if (!row) continue
    const fields = { ...(row.fields as Fields) }
    for (const key of subject.fields) if (typeof fields[key] === 'string') fields[key] = READ_MODEL_ERASED
    await trx.updateTable(table).set({ ...documentColumns(spec, fields, row.created_by as string | null), fields: JSON.stringify(fields) }).where('id', '=', subject.id).execute()
  }
}

type Run = { spec: KindSpec; action: 'created' | 'updated'; type: string; events: RecordedEvent[] }

/**
 * Consecutive creations of one type (a replay, an import) go in one statement (a COPY into a
 * rebuild's fresh tables: a record's stream is created once), consecutive edits of
 * one kind's documents in one read and one UPDATE; deletions and edits reaching other documents
 * one by one, in log order.
 */
async function applyBatch(trx: Transaction<Database>, actions: ReadonlyMap<string, Action>, events: readonly RecordedEvent[], fresh?: FreshTables): Promise<void> {
  let run: Run | undefined
  const flush = async () => {
    if (run?.action === 'created') await insertDocuments(trx, run.spec, run.events, fresh)
    // A short run of edits costs less one by one (projector.ts BATCH_FROM).
    if (run?.action === 'updated' && run.events.length < BATCH_FROM) for (const event of run.events) await apply(trx, actions, event)
    else if (run?.action === 'updated') await updateDocuments(trx, run.spec, run.events.map((recorded) => ({ id: run!.spec.streams.idOf(recorded.streamName), changed: changedBy(run!.spec, recorded) })))
    run = undefined
  }
  for (const event of events) {
    const { spec, action } = actions.get(event.type)!
    const joins = action === 'created' || (action === 'updated' && !reachesOthers(spec, changedBy(spec, event)))
    // Creations run per event type, edits per kind (a deal's edits and stage changes share one run).
    const type = action === 'created' ? event.type : spec.kind
    if (run && (!joins || run.action !== action || run.type !== type || run.events.length === 1000)) await flush()
    if (!joins) await apply(trx, actions, event)
    else if (run) run.events.push(event)
    else run = { spec, action: action as Run['action'], type, events: [event] }
  }
  await flush()
}

/** The logic's own version; the projector's adds each kind's (search-documents.ts `version`). */
const LOGIC_VERSION = 3

/** Search over the kinds the manifests declare (modules/search.ts), in the palette's order. */
export function searchProjector(kinds: readonly KindSpec[]): ErasingProjector {
  const actions = actionsOf(kinds)
  return withErasure({
    name: 'search',
    // 2: viewers, in tsv and the trigram index (members' searches intersect them in the index). 3: erasures blank, '' not "[erased]" (issue 31).
    version: LOGIC_VERSION + kinds.reduce((sum, spec) => sum + spec.version, 0),
    eventTypes: [...actions.keys()],
    // The parent first: the rebuild's swap drops the live parent (its partitions with it), then moves each table.
    tables: [SEARCH_TABLE, ...kinds.map((spec) => partitionOf(spec.kind))],
    createTables: (db) => createTables(db, kinds),
    createIndexes,
    apply: (trx, event) => apply(trx, actions, event),
    applyBatch: (trx, events, fresh) => applyBatch(trx, actions, events, fresh),
  }, (trx, subject) => eraseDocument(trx, kinds, subject))
}
