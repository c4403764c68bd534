import { sql } from 'kysely'
import { caseStreams } from '../../commands/case/case.ts'
import type { CaseEvent } from '../../commands/case/case.ts'
import type { CalendarOf } from '../../commands/business-hours/sla-clock.ts'
import { slaFigure } from '../../commands/case/sla-figures.ts'
import type { SlaFigure } from '../../commands/case/sla-figures.ts'
import { SLA_EVENT_TYPES, evolveSlaClocks, isSlaEvent, noSlaClocks } from '../../commands/case/sla.ts'
import type { SlaClocks, SlaKind } from '../../commands/case/sla.ts'
import type { Database, Db } from '../../db/database.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import { domainEventOf } from '../../events/versions.ts'
import { businessCalendarVersions } from '../business-hours/queries.ts'
import type { Projector } from '../kernel/projector.ts'

/**
 * The analytics read model (issue 32, "one SLA clock, from events, used everywhere"): per case, each
 * SLA instance as the one clock reads it (commands/case/sla-figures.ts `slaFigure`) as of the
 * instance's latest event: its state, target, business time used, fulfilment, running deadline and
 * breach. Every analytics figure is an aggregate over these rows (sla-analytics.ts), never wall-clock
 * elapsed time. The clock's events are kept in a table of their own (`case_sla_clocks`: the cases
 * read model follows at its own pace), and calendar versions never change once written, so a rebuild
 * computes the same.
 *
 * Each figures row also carries what the service overview groups and filters by (when the case
 * opened, its priority, type, assignees, status and whether it was deleted), folded from the case's
 * own events, so the overview reads this narrow table alone, its window a range of an index that
 * holds every column it reads (service-analytics.ts), rather than each opened case's wide row and
 * its figures by key.
 */
const PREFIX: Record<SlaKind, 'frt' | 'res'> = { first_response: 'frt', resolution: 'res' }
const FIGURES = Object.values(PREFIX).flatMap((p) => [`${p}_state`, `${p}_target_minutes`, `${p}_used_ms`, `${p}_fulfilled_at`, `${p}_deadline`, `${p}_breached_at`])

async function createTables(db: Db): Promise<void> {
  const columns = Object.values(PREFIX).flatMap((p) => [
    sql.raw(`${p}_state text NOT NULL DEFAULT 'inactive'`),
    sql.raw(`${p}_target_minutes integer`),
    sql.raw(`${p}_used_ms double precision NOT NULL DEFAULT 0`),
    ...['fulfilled_at', 'deadline', 'breached_at'].map((c) => sql.raw(`${p}_${c} timestamptz`)),
  ])
  await sql`CREATE TABLE case_sla_figures (case_id uuid PRIMARY KEY, org_id uuid NOT NULL, created_at timestamptz NOT NULL, priority text NOT NULL, case_type text, assigned_to uuid[] NOT NULL,
    status text NOT NULL, is_deleted boolean NOT NULL, ${sql.join(columns)})`.execute(db)
  await sql`CREATE TABLE case_sla_clocks (case_id uuid PRIMARY KEY, org_id uuid NOT NULL, sla_clocks jsonb NOT NULL)`.execute(db)
}

/**
 * MTTR's window: the resolutions fulfilled in it (sla-analytics.ts `resolvedIn`). The service
 * overview's two ranges, the cases opened in its window and those resolved since, over the cases it
 * counts (live, merged duplicates out), each index holding every column the overview reads.
 */
async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX case_sla_figures_resolved ON case_sla_figures (res_fulfilled_at) WHERE res_state = 'fulfilled'`.execute(db)
  await sql`CREATE INDEX case_sla_figures_opened ON case_sla_figures (org_id, created_at) INCLUDE (priority, case_type, assigned_to, frt_state, frt_used_ms, frt_deadline, frt_breached_at)
    WHERE NOT is_deleted AND status <> 'Duplicate'`.execute(db)
  await sql`CREATE INDEX case_sla_figures_org_resolved ON case_sla_figures (org_id, res_fulfilled_at) INCLUDE (assigned_to, res_state, res_used_ms)
    WHERE res_state = 'fulfilled' AND NOT is_deleted AND status <> 'Duplicate'`.execute(db)
}

/** What the figures row knows of its case, folded from the case's events. */
type Facts = { org_id: string; created_at: Date; priority: string; case_type: string | null; assigned_to: string[]; status: string; is_deleted: boolean }
type Touched = { facts: Facts; figures: Record<string, unknown>; clocks: SlaClocks; clocked: boolean }
const figureColumns = (kind: SlaKind, figure: SlaFigure) => {
  const p = PREFIX[kind]
  return { [`${p}_state`]: figure.state, [`${p}_target_minutes`]: figure.targetMinutes, [`${p}_used_ms`]: figure.usedMs, [`${p}_fulfilled_at`]: figure.fulfilledAt, [`${p}_deadline`]: figure.deadline, [`${p}_breached_at`]: figure.breachedAt }
}

/** The case's facts after one of its events (the figures' own events change none). */
function factsAfter(facts: Facts, event: CaseEvent): Facts {
  if (event.type === 'CaseDeleted') return { ...facts, is_deleted: true }
  if (event.type === 'CaseMoved') return event.data.status ? { ...facts, status: event.data.status.to } : facts
  if (event.type !== 'CaseUpdated') return facts
  const { priority, case_type, assigned_to, status } = event.data.changes
  return { ...facts, ...(priority && { priority: priority.to }), ...(case_type && { case_type: case_type.to }), ...(assigned_to && { assigned_to: assigned_to.to }), ...(status && { status: status.to }) }
}

/** The stored rows of these cases: facts, figures and clocks. */
async function storedRows(db: Db, ids: readonly string[]): Promise<Map<string, Touched>> {
  const { rows } = await sql<Facts & { case_id: string; sla_clocks: SlaClocks | null } & Record<string, unknown>>`SELECT f.*, k.sla_clocks FROM case_sla_figures f LEFT JOIN case_sla_clocks k ON k.case_id = f.case_id WHERE f.case_id = ANY(${ids}::uuid[])`.execute(db)
  return new Map(rows.map(({ case_id, org_id, created_at, priority, case_type, assigned_to, status, is_deleted, sla_clocks, ...figures }) => [case_id, { facts: { org_id, created_at, priority, case_type, assigned_to, status, is_deleted }, figures, clocks: { ...noSlaClocks(), ...sla_clocks }, clocked: false }]))
}

/**
 * A page of events (one event when live): each case's facts and clocks folded in memory, then one
 * upsert of every case touched (and of the clocks of those whose clocks moved). Each instance's
 * figure is taken as of its own latest event (the last of its clock), so it does not matter how the
 * events were paged: a rebuild leaves the rows the live projection does.
 */
async function applyEvents(db: Db, events: readonly { id: string; event: CaseEvent }[]): Promise<void> {
  const ids = [...new Set(events.map(({ id }) => id))]
  // A page may hold none of this read model's events (the runner saves an idle checkpoint with an empty one).
  if (!ids.length) return
  const rows = await storedRows(db, ids)
  const touched = new Set<string>()
  for (const { id, event } of events) {
    if (event.type === 'CaseCreated' && !rows.has(id)) {
      const { org_id, at, priority, case_type, assigned_to, status } = event.data
      rows.set(id, { facts: { org_id, created_at: new Date(at), priority, case_type, assigned_to, status, is_deleted: false }, figures: {}, clocks: noSlaClocks(), clocked: true })
    }
    const row = rows.get(id)
    if (!row) continue
    if (isSlaEvent(event)) Object.assign(row, { clocks: evolveSlaClocks(row.clocks, event), clocked: true })
    else row.facts = factsAfter(row.facts, event)
    touched.add(id)
  }
  if (!touched.size) return
  const calendars = new Map<string, CalendarOf>()
  const values = []
  for (const id of touched) {
    const { facts, clocks, clocked, figures } = rows.get(id)!
    const orgId = facts.org_id
    if (clocked && !calendars.has(orgId)) calendars.set(orgId, await businessCalendarVersions(db, orgId))
    const figure = (kind: SlaKind) => figureColumns(kind, slaFigure(clocks[kind], calendars.get(orgId)!, new Date(clocks[kind].at(-1)?.at ?? 0)))
    values.push({ case_id: id, ...facts, ...(clocked ? { ...figure('first_response'), ...figure('resolution') } : figures) })
  }
  const clocks = [...touched].filter((id) => rows.get(id)!.clocked).map((id) => ({ case_id: id, org_id: rows.get(id)!.facts.org_id, sla_clocks: JSON.stringify(rows.get(id)!.clocks) as unknown as SlaClocks }))
  await upsert(db, 'case_sla_figures', values as unknown as SlaFigureRow[], ['org_id', 'created_at', 'priority', 'case_type', 'assigned_to', 'status', 'is_deleted', ...FIGURES])
  if (clocks.length) await upsert(db, 'case_sla_clocks', clocks, ['org_id', 'sla_clocks'])
}

async function upsert<T extends 'case_sla_figures' | 'case_sla_clocks'>(db: Db, table: T, values: Database[T][], columns: readonly string[]): Promise<void> {
  await db
    .insertInto(table)
    .values(values as never)
    .onConflict((oc) => oc.column('case_id').doUpdateSet(Object.fromEntries(columns.map((column) => [column, sql.ref(`excluded.${column}`)])) as never))
    .execute()
}

const decoded = (recorded: RecordedEvent) => ({ id: caseStreams.idOf(recorded.streamName), event: domainEventOf<CaseEvent>(recorded) })

export type SlaFigureRow = Facts & { case_id: string }
export type SlaClocksRow = { case_id: string; org_id: string; sla_clocks: SlaClocks }

export const caseSlaFiguresProjector: Projector = {
  name: 'case_sla_figures',
  // 2: the case's facts the service overview reads (its own read of them) on each row; the clocks in a table of their own.
  version: 2,
  eventTypes: ['CaseCreated', 'CaseUpdated', 'CaseMoved', 'CaseDeleted', ...SLA_EVENT_TYPES],
  tables: ['case_sla_figures', 'case_sla_clocks'],
  createTables,
  createIndexes,
  apply: (trx, recorded) => applyEvents(trx, [decoded(recorded)]),
  applyBatch: (trx, events) => applyEvents(trx, events.map(decoded)),
}

// This read model's table joins the one Database type (db/database.ts); its figure columns are read through SQL (sla-analytics.ts).
declare module '../../db/database.ts' {
  interface Database {
    case_sla_figures: SlaFigureRow
    case_sla_clocks: SlaClocksRow
  }
}
