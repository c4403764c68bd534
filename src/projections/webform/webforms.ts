import { sql } from 'kysely'
import { submissionStreams } from '../../commands/webform/submission.ts'
import type { Made, SubmissionEvent } from '../../commands/webform/submission.ts'
import { webFormStreams } from '../../commands/webform/webform.ts'
import type { WebFormEvent } from '../../commands/webform/webform.ts'
import type { Db } from '../../db/database.ts'
import { insertRowsOnce, updateRows } from '../../db/insert-rows.ts'
import { domainEventOf } from '../../events/versions.ts'
import { READ_MODEL_ERASED } from '../../privacy/seal.ts'
import { withErasure } from '../privacy/erasing.ts'
import { fetchPage } from '../kernel/records.ts'
import type { WebFormRow, WebFormSubmissionRow } from './tables.ts'

export type { WebFormRow, WebFormSubmissionRow } from './tables.ts'

/**
 * The web forms and their submissions (docs/web-forms.md): what the admin routes list and the public
 * routes serve. Erasing a lead or contact blanks the answers of the submissions that made or matched
 * it: they were sealed under its key (issue 31).
 */
export const webFormsProjector = withErasure({
  name: 'webforms',
  // 2: erasures blank answers, '' not "[erased]" (issue 31). 3: contacts and cases (contact_id, case_id), releases (released_at).
  version: 3,
  eventTypes: ['WebFormCreated', 'WebFormUpdated', 'WebFormPublished', 'WebFormUnpublished', 'WebFormDeleted', 'WebFormSubmitted', 'WebFormSubmissionQuarantined', 'WebFormSubmissionReleased'],
  tables: ['webforms', 'webform_submissions'],
  async createTables(db) {
    await sql`
      CREATE TABLE webforms (
        id uuid PRIMARY KEY, org_id uuid NOT NULL, name text NOT NULL, description text NOT NULL, target text NOT NULL,
        fields jsonb NOT NULL, success_message text NOT NULL, allowed_origins text[] NOT NULL, assigned_to uuid[] NOT NULL, consent jsonb,
        is_published boolean NOT NULL, published_at timestamptz, created_by uuid, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL
      )`.execute(db)
    await sql`
      CREATE TABLE webform_submissions (
        id uuid PRIMARY KEY, org_id uuid NOT NULL, form_id uuid NOT NULL, status text NOT NULL, outcome text, lead_id uuid, contact_id uuid, case_id uuid, reason text,
        answers jsonb NOT NULL, consent jsonb, source_page text, created_at timestamptz NOT NULL, released_at timestamptz
      )`.execute(db)
  },
  async createIndexes(db) {
    await sql`CREATE INDEX webforms_org ON webforms (org_id, created_at)`.execute(db)
    await sql`CREATE INDEX webform_submissions_form ON webform_submissions (org_id, form_id, created_at)`.execute(db)
  },
  // Inserts skip rows already there and updates set values, so applying an event twice changes nothing.
  async apply(db, recorded) {
    if (recorded.streamName.startsWith(submissionStreams.stream(''))) return applySubmission(db, submissionStreams.idOf(recorded.streamName), domainEventOf<SubmissionEvent>(recorded))
    const id = webFormStreams.idOf(recorded.streamName)
    const event = domainEventOf<WebFormEvent>(recorded)
    switch (event.type) {
      case 'WebFormCreated': {
        const { form_id: _id, at, ...design } = event.data
        const row: WebFormRow = { id, ...design, is_published: false, published_at: null, created_at: new Date(at), updated_at: new Date(at) }
        return insertRowsOnce(db, 'webforms', 'id', [row])
      }
      case 'WebFormUpdated': {
        const { at, ...changes } = event.data
        return updateRows(db, 'webforms', 'id', [{ key: id, set: { ...changes, updated_at: at } }])
      }
      case 'WebFormPublished':
        await db.updateTable('webforms').set({ is_published: true, published_at: new Date(event.data.at), updated_at: new Date(event.data.at) }).where('id', '=', id).execute()
        return
      case 'WebFormUnpublished':
        await db.updateTable('webforms').set({ is_published: false, updated_at: new Date(event.data.at) }).where('id', '=', id).execute()
        return
      case 'WebFormDeleted':
        await db.deleteFrom('webforms').where('id', '=', id).execute()
        return
    }
  },
}, async (trx, subject) => {
  // The answers of the submissions that made or matched the erased person's lead or contact (a case's submitter included).
  const person = subject.kind === 'lead' ? sql`lead_id` : subject.kind === 'contact' ? sql`contact_id` : undefined
  if (!person) return
  await sql`UPDATE webform_submissions SET answers = (SELECT jsonb_object_agg(key, CASE WHEN jsonb_typeof(value) = 'string' THEN to_jsonb(${READ_MODEL_ERASED}::text) ELSE value END) FROM jsonb_each(answers))
    WHERE ${person} = ${subject.id} AND answers <> '{}'::jsonb`.execute(trx)
})

/** The record columns of what a submission made (absent ids: null). */
const madeColumns = (made: Made) => ({ outcome: made.outcome, lead_id: made.lead_id ?? null, contact_id: made.contact_id ?? null, case_id: made.case_id ?? null })

async function applySubmission(db: Db, id: string, event: SubmissionEvent): Promise<void> {
  if (event.type === 'WebFormSubmissionReleased') {
    // Released: accepted from now on, with the record made then; its day stays the one it came in.
    await db.updateTable('webform_submissions').set({ status: 'accepted', ...madeColumns(event.data), consent: event.data.consent, released_at: new Date(event.data.at) }).where('id', '=', id).execute()
    return
  }
  const { form_id, org_id, answers, source_page, at } = event.data
  const common = { id, org_id, form_id, answers, source_page, created_at: new Date(at), released_at: null }
  const row: WebFormSubmissionRow =
    event.type === 'WebFormSubmitted'
      ? { ...common, status: 'accepted', ...madeColumns(event.data), reason: null, consent: event.data.consent }
      : { ...common, status: 'quarantined', outcome: null, lead_id: null, contact_id: null, case_id: null, reason: event.data.reason, consent: null }
  await insertRowsOnce(db, 'webform_submissions', 'id', [row])
}

type Page = { limit: number; offset: number }

/** The organization's forms, oldest first, optionally only the published (or unpublished) ones. */
export function listWebForms(db: Db, orgId: string, page: Page, published?: boolean): Promise<{ count: number; rows: WebFormRow[] }> {
  let query = db.selectFrom('webforms').where('org_id', '=', orgId)
  if (published !== undefined) query = query.where('is_published', '=', published)
  return fetchPage<WebFormRow>(query, page, (q) => q.orderBy('created_at').orderBy('id'))
}

/** A form of the organization, or undefined: another organization's id looks exactly like a missing one. */
export function webFormOf(db: Db, orgId: string, id: string): Promise<WebFormRow | undefined> {
  return db.selectFrom('webforms').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

/** What the public routes serve: the form only while published, and only under its own organization's id. */
export function publishedWebForm(db: Db, orgId: string, id: string): Promise<WebFormRow | undefined> {
  return db.selectFrom('webforms').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('is_published', '=', true).executeTakeFirst()
}

/** A form's submissions, newest first, optionally of one status. */
export function listSubmissions(db: Db, orgId: string, formId: string, page: Page, status?: WebFormSubmissionRow['status']): Promise<{ count: number; rows: WebFormSubmissionRow[] }> {
  let query = db.selectFrom('webform_submissions').where('org_id', '=', orgId).where('form_id', '=', formId)
  if (status) query = query.where('status', '=', status)
  return fetchPage<WebFormSubmissionRow>(query, page, (q) => q.orderBy('created_at', 'desc').orderBy('id'))
}

/** One submission of the organization's form, or undefined (another form's or organization's looks missing). */
export function submissionOf(db: Db, orgId: string, formId: string, id: string): Promise<WebFormSubmissionRow | undefined> {
  return db.selectFrom('webform_submissions').selectAll().where('org_id', '=', orgId).where('form_id', '=', formId).where('id', '=', id).executeTakeFirst()
}

export type FormTotals = { accepted: number; leads_created: number; matched: number; quarantined: number; last_submission_at: Date | null }
export type DayCount = { date: string; accepted: number; quarantined: number }

/** A form's totals, and its accepted and quarantined submissions per UTC day for the `days` days up to `today` (clock-dependent: computed here, not stored). */
export async function submissionAnalytics(db: Db, orgId: string, formId: string, today: Date, days: number): Promise<{ totals: FormTotals; daily: DayCount[] }> {
  const totals = await sql<FormTotals>`
    SELECT count(*) FILTER (WHERE status = 'accepted')::int AS accepted, count(*) FILTER (WHERE outcome = 'created')::int AS leads_created,
      count(*) FILTER (WHERE outcome = 'matched')::int AS matched, count(*) FILTER (WHERE status = 'quarantined')::int AS quarantined,
      max(created_at) FILTER (WHERE status = 'accepted') AS last_submission_at
    FROM webform_submissions WHERE org_id = ${orgId} AND form_id = ${formId}`.execute(db)
  const day = sql`(${today.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date`
  const daily = await sql<DayCount>`
    SELECT to_char(d.day, 'YYYY-MM-DD') AS date,
      count(s.id) FILTER (WHERE s.status = 'accepted')::int AS accepted, count(s.id) FILTER (WHERE s.status = 'quarantined')::int AS quarantined
    FROM (SELECT ${day} - n AS day FROM generate_series(${days - 1}::int, 0, -1) AS g(n)) AS d
    LEFT JOIN webform_submissions s ON s.org_id = ${orgId} AND s.form_id = ${formId} AND (s.created_at AT TIME ZONE 'UTC')::date = d.day
    GROUP BY d.day ORDER BY d.day`.execute(db)
  return { totals: totals.rows[0]!, daily: daily.rows }
}
