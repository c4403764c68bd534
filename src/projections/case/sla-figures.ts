import { sql } from 'kysely'
import { caseStreams } from '../../commands/case/case.ts'
import type { CaseEvent } from '../../commands/case/case.ts'
import type { CalendarOf } from '../../commands/business-hours/sla-clock.ts'
import { slaFigure } from '../../commands/case/sla-figures.ts'
import type { SlaFigure } from '../../commands/case/sla-figures.ts'
import { SLA_EVENT_TYPES, evolveSlaClocks, isSlaEvent, noSlaClocks } from '../../commands/case/sla.ts'
import type { SlaClocks, SlaKind } from '../../commands/case/sla.ts'
import type { Db } from '../../db/database.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import { domainEventOf } from '../../events/versions.ts'
import { businessCalendarVersions } from '../business-hours/queries.ts'
import type { Projector } from '../kernel/projector.ts'

/**
 * The analytics read model (issue 32, "one SLA clock, from events, used everywhere"): per case, each
 * SLA instance as the one clock reads it (commands/case/sla-figures.ts `slaFigure`) as of the
 * instance's latest event: its state, target, business time used, fulfilment, running deadline and
 * breach. Every analytics figure is an aggregate over these rows (sla-analytics.ts), never wall-clock
 * elapsed time. The clock's events are kept on the row (its own copy: the cases read model follows
 * at its own pace), and calendar versions never change once written, so a rebuild computes the same.
 */
const PREFIX: Record<SlaKind, 'frt' | 'res'> = { first_response: 'frt', resolution: 'res' }

async function createTables(db: Db): Promise<void> {
  const columns = Object.values(PREFIX).flatMap((p) => [
    sql.raw(`${p}_state text NOT NULL DEFAULT 'inactive'`),
    sql.raw(`${p}_target_minutes integer`),
    sql.raw(`${p}_used_ms double precision NOT NULL DEFAULT 0`),
    ...['fulfilled_at', 'deadline', 'breached_at'].map((c) => sql.raw(`${p}_${c} timestamptz`)),
  ])
  await sql`CREATE TABLE case_sla_figures (case_id uuid PRIMARY KEY, org_id uuid NOT NULL, sla_clocks jsonb NOT NULL, ${sql.join(columns)})`.execute(db)
}

/** MTTR's window: the resolutions fulfilled in it (sla-analytics.ts `resolvedIn`). */
async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX case_sla_figures_resolved ON case_sla_figures (res_fulfilled_at) WHERE res_state = 'fulfilled'`.execute(db)
}

type Touched = { orgId: string; clocks: SlaClocks }
const figureColumns = (kind: SlaKind, figure: SlaFigure) => {
  const p = PREFIX[kind]
  return { [`${p}_state`]: figure.state, [`${p}_target_minutes`]: figure.targetMinutes, [`${p}_used_ms`]: figure.usedMs, [`${p}_fulfilled_at`]: figure.fulfilledAt, [`${p}_deadline`]: figure.deadline, [`${p}_breached_at`]: figure.breachedAt }
}

/**
 * A page of events (one event when live): each case's clocks folded in memory, then one upsert of
 * every case touched. Each instance's figure is taken as of its own latest event (the last of its
 * clock), so it does not matter how the events were paged: a rebuild leaves the rows the live
 * projection does.
 */
async function applyEvents(db: Db, events: readonly { id: string; event: CaseEvent }[]): Promise<void> {
  const ids = [...new Set(events.map(({ id }) => id))]
  // A page may hold none of this read model's events (the runner saves an idle checkpoint with an empty one).
  if (!ids.length) return
  const stored = await db.selectFrom('case_sla_figures').select(['case_id', 'org_id', 'sla_clocks']).where('case_id', 'in', ids).execute()
  const rows = new Map<string, Touched>(stored.map((row) => [row.case_id, { orgId: row.org_id, clocks: { ...noSlaClocks(), ...row.sla_clocks } }]))
  const touched = new Set<string>()
  for (const { id, event } of events) {
    if (event.type === 'CaseCreated' && !rows.has(id)) rows.set(id, { orgId: event.data.org_id, clocks: noSlaClocks() })
    const row = rows.get(id)
    if (!row || !(event.type === 'CaseCreated' || isSlaEvent(event))) continue
    if (isSlaEvent(event)) row.clocks = evolveSlaClocks(row.clocks, event)
    touched.add(id)
  }
  if (!touched.size) return
  const calendars = new Map<string, CalendarOf>()
  const values = []
  for (const id of touched) {
    const { orgId, clocks } = rows.get(id)!
    if (!calendars.has(orgId)) calendars.set(orgId, await businessCalendarVersions(db, orgId))
    const figure = (kind: SlaKind) => figureColumns(kind, slaFigure(clocks[kind], calendars.get(orgId)!, new Date(clocks[kind].at(-1)?.at ?? 0)))
    values.push({ case_id: id, org_id: orgId, sla_clocks: JSON.stringify(clocks), ...figure('first_response'), ...figure('resolution') })
  }
  const columns = Object.keys(values[0]!).filter((column) => column !== 'case_id')
  await db
    .insertInto('case_sla_figures')
    .values(values as unknown as SlaFigureRow[])
    .onConflict((oc) => oc.column('case_id').doUpdateSet(Object.fromEntries(columns.map((column) => [column, sql.ref(`excluded.${column}`)]))))
    .execute()
}

const decoded = (recorded: RecordedEvent) => ({ id: caseStreams.idOf(recorded.streamName), event: domainEventOf<CaseEvent>(recorded) })

export type SlaFigureRow = { case_id: string; org_id: string; sla_clocks: SlaClocks }

export const caseSlaFiguresProjector: Projector = {
  name: 'case_sla_figures',
  version: 1,
  eventTypes: ['CaseCreated', ...SLA_EVENT_TYPES],
  tables: ['case_sla_figures'],
  createTables,
  createIndexes,
  apply: (trx, recorded) => applyEvents(trx, [decoded(recorded)]),
  applyBatch: (trx, events) => applyEvents(trx, events.map(decoded)),
}

// This read model's table joins the one Database type (db/database.ts); its figure columns are read through SQL (sla-analytics.ts).
declare module '../../db/database.ts' {
  interface Database {
    case_sla_figures: SlaFigureRow
  }
}
