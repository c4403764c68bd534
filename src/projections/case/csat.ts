import { sql } from 'kysely'
import { csatStreams } from '../../commands/case/csat.ts'
import type { CsatEvent } from '../../commands/case/csat.ts'
import type { Db } from '../../db/database.ts'
import { domainEventOf } from '../../events/versions.ts'
import { blankColumns, withErasure } from '../privacy/erasing.ts'

/**
 * Satisfaction surveys (commands/case/csat.ts): one row per case surveyed, its answer once given.
 * The aggregate (`csat/aggregate/`), the agents' mean rating (sla-analytics.ts), the public link
 * and the sender's "not yet surveyed" read it.
 */
export type CaseCsatRow = {
  case_id: string
  org_id: string
  contact_id: string
  sent_at: Date
  expires_at: Date
  rating: number | null
  comment: string | null
  first_answered_at: Date | null
  answered_at: Date | null
}

async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE case_csat (case_id uuid PRIMARY KEY, org_id uuid NOT NULL, contact_id uuid NOT NULL, sent_at timestamptz NOT NULL, expires_at timestamptz NOT NULL,
    rating smallint, comment text, first_answered_at timestamptz, answered_at timestamptz)`.execute(db)
  await sql`CREATE INDEX case_csat_org_rating ON case_csat (org_id, rating) WHERE rating IS NOT NULL`.execute(db)
}

async function apply(db: Db, caseId: string, event: CsatEvent): Promise<void> {
  if (event.type === 'CsatSurveySent') {
    const { org_id, contact_id, expires_at, at } = event.data
    await db.insertInto('case_csat').values({ case_id: caseId, org_id, contact_id, sent_at: new Date(at), expires_at: new Date(expires_at), rating: null, comment: null, first_answered_at: null, answered_at: null }).onConflict((oc) => oc.column('case_id').doNothing()).execute()
    return
  }
  const at = new Date(event.data.at)
  await sql`UPDATE case_csat SET rating = ${event.data.rating}, comment = ${event.data.comment}, answered_at = ${at}, first_answered_at = COALESCE(first_answered_at, ${at}) WHERE case_id = ${caseId}`.execute(db)
}

/** An erased contact's survey keeps its rating (no personal data) and loses its comment, sealed under them. */
export const caseCsatProjector = withErasure(
  {
    name: 'case_csat',
    version: 1,
    eventTypes: ['CsatSurveySent', 'CsatSurveyAnswered'],
    tables: ['case_csat'],
    createTables,
    apply: (trx, recorded) => apply(trx, csatStreams.idOf(recorded.streamName), domainEventOf<CsatEvent>(recorded)),
  },
  async (trx, subject) => {
    if (subject.kind === 'contact') await blankColumns(trx, 'case_csat', ['comment'], { column: 'contact_id', value: subject.id })
  },
)

/** A case's survey, whatever its organization (the public link names the case; its token was checked). */
export const csatSurveyOf = (db: Db, caseId: string): Promise<CaseCsatRow | undefined> => db.selectFrom('case_csat').selectAll().where('case_id', '=', caseId).executeTakeFirst()

export type CsatAggregate = { average: number | null; count: number; distribution: Record<string, number> }

/** The organization's answered surveys: mean rating, how many, and how many of each rating. */
export async function csatAggregate(db: Db, orgId: string): Promise<CsatAggregate> {
  const rows = await db.selectFrom('case_csat').select(['rating', sql<string>`count(*)`.as('n')]).where('org_id', '=', orgId).where('rating', 'is not', null).groupBy('rating').execute()
  const distribution: Record<string, number> = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 }
  for (const row of rows) distribution[String(row.rating)] = Number(row.n)
  const count = Object.values(distribution).reduce((a, b) => a + b, 0)
  const sum = Object.entries(distribution).reduce((total, [rating, n]) => total + Number(rating) * n, 0)
  return { average: count ? sum / count : null, count, distribution }
}

export type SurveyDue = { case_id: string; org_id: string; name: string; contact_id: string; email: string }

/**
 * Closed cases due a survey: closed in [`closedAfter`, `closedBefore`] (a case closed and reopened
 * at once is not surveyed; one closed long before surveys were switched on is not either), not
 * surveyed yet, in an organization that sends surveys, each with its first live contact that has
 * an email (the one surveyed). Oldest first, `limit` at a time.
 */
export async function casesDueSurvey(db: Db, closed: { after: Date; before: Date }, limit: number): Promise<SurveyDue[]> {
  const { rows } = await sql<SurveyDue>`SELECT c.id AS case_id, c.org_id, c.name, ct.id AS contact_id, ct.email FROM cases c JOIN organizations o ON o.id = c.org_id
    JOIN LATERAL (SELECT id, email FROM contacts WHERE id = ANY(c.contacts) AND org_id = c.org_id AND NOT is_deleted AND COALESCE(email, '') <> '' ORDER BY created_at, id LIMIT 1) ct ON true
    WHERE c.status = 'Closed' AND NOT c.is_deleted AND c.resolved_at >= ${closed.after} AND c.resolved_at <= ${closed.before} AND o.csat_enabled
      AND NOT EXISTS (SELECT 1 FROM case_csat s WHERE s.case_id = c.id)
    ORDER BY c.resolved_at, c.id LIMIT ${limit}`.execute(db)
  return rows
}

declare module '../../db/database.ts' {
  interface Database {
    case_csat: CaseCsatRow
  }
}
