import { sql } from 'kysely'
import { caseStreams } from '../../commands/case/case.ts'
import type { CaseEvent } from '../../commands/case/case.ts'
import { slaFigure } from '../../commands/case/sla-figures.ts'
import { SLA_EVENT_TYPES, evolveSlaClocks, isSlaEvent, noSlaClocks } from '../../commands/case/sla.ts'
import type { CaseSlaEvent, SlaClocks, SlaKind } from '../../commands/case/sla.ts'
import type { Db } from '../../db/database.ts'
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
export const PREFIX: Record<SlaKind, 'frt' | 'res'> = { first_response: 'frt', resolution: 'res' }
const FIGURE_COLUMNS = ['state', 'target_minutes', 'used_ms', 'fulfilled_at', 'deadline', 'breached_at'] as const

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

async function applySla(db: Db, id: string, event: CaseSlaEvent): Promise<void> {
  const row = await db.selectFrom('case_sla_figures').select(['org_id', 'sla_clocks']).where('case_id', '=', id).executeTakeFirst()
  if (!row) return
  const clocks = evolveSlaClocks({ ...noSlaClocks(), ...row.sla_clocks }, event)
  const figure = slaFigure(clocks[event.data.sla], await businessCalendarVersions(db, row.org_id), new Date(event.data.at))
  const values = [figure.state, figure.targetMinutes, figure.usedMs, figure.fulfilledAt, figure.deadline, figure.breachedAt]
  const p = PREFIX[event.data.sla]
  const set = FIGURE_COLUMNS.map((column, i) => sql`${sql.raw(`${p}_${column}`)} = ${values[i]}`)
  await sql`UPDATE case_sla_figures SET sla_clocks = ${JSON.stringify(clocks)}::jsonb, ${sql.join(set)} WHERE case_id = ${id}`.execute(db)
}

async function apply(db: Db, id: string, event: CaseEvent): Promise<void> {
  if (event.type === 'CaseCreated') {
    await sql`INSERT INTO case_sla_figures (case_id, org_id, sla_clocks) VALUES (${id}, ${event.data.org_id}, ${JSON.stringify(noSlaClocks())}::jsonb) ON CONFLICT (case_id) DO NOTHING`.execute(db)
  } else if (isSlaEvent(event)) await applySla(db, id, event)
}

export type SlaFigureRow = { case_id: string; org_id: string; sla_clocks: SlaClocks }

export const caseSlaFiguresProjector: Projector = {
  name: 'case_sla_figures',
  version: 1,
  eventTypes: ['CaseCreated', ...SLA_EVENT_TYPES],
  tables: ['case_sla_figures'],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, caseStreams.idOf(recorded.streamName), domainEventOf<CaseEvent>(recorded)),
}

// This read model's table joins the one Database type (db/database.ts); its figure columns are read through SQL (sla-analytics.ts).
declare module '../../db/database.ts' {
  interface Database {
    case_sla_figures: SlaFigureRow
  }
}
