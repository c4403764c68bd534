import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { eraseSubject } from '../../commands/privacy/erase-subject.ts'
import { exportSubject } from '../../commands/privacy/export-subject.ts'
import type { SubjectErasedData } from '../../commands/privacy/erasure.ts'
import { MEMBER_KIND } from '../../commands/privacy/erase-member.ts'
import type { Deps } from '../../deps.ts'
import type { FileStore } from '../../files/file-store.ts'
import { orNotFound } from '../../errors.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { ERASED } from '../../privacy/seal.ts'
import { erasureOf, listErasures } from '../../projections/privacy/erasures.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, IdParams, PageQuery, authErrors, pageOf } from '../kernel/schemas/common.ts'

/** What erasure leaves in place, and why: the same for every person (docs/personal-data.md). */
const KEPT = [
  { what: 'The ids of the person\'s record and of the records that point at it (deals, tasks, comments), their amounts, stages, dates, flags and event types', ground: 'Not personal data once the person\'s fields are unreadable: kept so that the records that pointed at the person keep their history and totals' },
  { what: 'Who acted on the record and when (profile ids in event metadata)', ground: 'Not the erased person\'s data: the members\' own audit trail' },
]

/** The copies every erasure handles besides the read models it rebuilds. */
const LOG_COPIES = [
  { copy: 'event log', handling: 'The personal fields were sealed under the person\'s key, now destroyed: they read {"erased": true} in every read of the log (history, as_of, the event feed, SSE, exports, rebuilds)' },
  { copy: 'webhook delivery logs', handling: 'Hold event ids and types only; payloads are read from the log when sent, so redeliveries carry {"erased": true}' },
  { copy: 'NDJSON exports made from now on', handling: 'Read from the log: {"erased": true}' },
]

/** The copies a member's erasure handles: identity is kept in tables, not in the log (docs/personal-data.md). */
const MEMBER_COPIES = [
  { copy: 'member profile', handling: 'Deactivated, its phone blanked, its personal access tokens and sessions revoked' },
  { copy: 'user account', handling: 'Email and name blanked when the account belongs to no other organization; otherwise kept for the organizations it still belongs to (not listed under erased fields)' },
  { copy: 'event log', handling: 'Holds the member\'s profile id only (who acted), never their name or email' },
]

/** How a read model's copy was handled: blanked by its erasure handler, or declared to hold none (projections/privacy/erasing.ts). */
const BLANKED = 'Blanked at once by its erasure handler: an empty string where the person\'s data was, as a rebuild from the log leaves it'
const HOLDS_NONE = 'Holds none: it reads the person\'s events but was declared to keep none of their personal fields (ids and outcomes only), so there was nothing to blank'

const Receipt = z.object({
  id: z.uuid(),
  kind: z.string(),
  subject_id: z.uuid(),
  erased_at: z.string(),
  erased_by: z.uuid().nullable().describe('Profile id of the admin; null for the organization API key'),
  erased: z.object({
    fields: z.array(z.string()).describe('The kinds of personal fields the person\'s events held (names, never values)'),
    events: z.number().int().describe('How many of the person\'s events held personal data, now unreadable'),
    reads_as: z.object({ erased: z.literal(true) }).describe('What every erased field reads as in the log from now on (history, the event feed, SSE, webhooks, exports); the read models show it blank'),
  }),
  kept: z.array(z.object({ what: z.string(), ground: z.string() })).describe('What was kept, and on which ground'),
  copies: z.array(z.object({ copy: z.string(), handling: z.string() })).describe('Each copy of the data and what became of it'),
  key_backups_expire_at: z.string().describe('When the last database backup that still holds the destroyed key expires (BACKUP_RETENTION_DAYS)'),
})

const SubjectExport = z.object({
  kind: z.string(),
  subject_id: z.uuid(),
  exported_at: z.string(),
  events: z
    .array(
      z.object({
        stream: z.string(),
        revision: z.number().int(),
        type: z.string().describe('The event type (GET /api/events/schema/ describes each)'),
        at: z.string().describe('When it was written'),
        by: z.uuid().nullable().describe('Profile id of who wrote it; null for the organization API key or the system'),
        fields: z.record(z.string(), z.unknown()).describe('The personal fields it holds, by path in its data (`email`, `changes.email.to`)'),
      }),
    )
    .describe('Every event of the person that holds personal data, oldest first'),
})

const receiptBody = (receipt: SubjectErasedData): z.infer<typeof Receipt> => ({
  id: receipt.receipt_id,
  kind: receipt.kind,
  subject_id: receipt.subject_id,
  erased_at: receipt.at,
  erased_by: receipt.by,
  erased: { fields: receipt.fields, events: receipt.events, reads_as: { ...ERASED } },
  kept: KEPT,
  copies: receipt.kind === MEMBER_KIND ? MEMBER_COPIES : [
    ...LOG_COPIES,
    { copy: 'attached files', handling: `${receipt.files_deleted} file(s) attached to the person's record deleted from the file store` },
    ...receipt.read_models.map((name) => ({ copy: `read model ${name}`, handling: BLANKED })),
    ...(receipt.read_models_holding_none ?? []).map((name) => ({ copy: `read model ${name}`, handling: HOLDS_NONE })),
  ],
  key_backups_expire_at: receipt.key_backups_expire_at,
})

/**
 * Erasure of a person on request (issue 31; GDPR Article 17) and their subject-access export
 * (Articles 15 and 20), for admins. Not in the spec: the original deletes rows. docs/api-guide.md
 * ("Erasing a person") and docs/personal-data.md.
 */
export function privacyRoutes(deps: Deps, files: FileStore, subjectKinds: readonly [string, ...string[]]): FastifyPluginAsyncZod {
  const { db } = deps
  const ErasureBody = z.object({
    kind: z.enum([...subjectKinds, MEMBER_KIND]).describe(`The kind of person: the record kinds whose modules declare them, or \`${MEMBER_KIND}\` for a member's profile (its id: the profile id)`),
    id: z.uuid(),
  })
  return async (app) => {
    app.post(
      '/api/privacy/erasures/',
      {
        schema: {
          tags: ['privacy'],
          summary: 'Erase a person (admins): destroys their key, rebuilds the read models that held their data, answers the receipt',
          description: `Answers once the erasure is complete: 201 with the receipt; 200 with the same receipt when the person was erased before. 404 when the organization has no such person. A member (\`${MEMBER_KIND}\`): their profile deactivated and blanked, their tokens revoked, their account's email and name blanked when it belongs to no other organization; 400 for the caller's own profile or the last active admin.`,
          body: ErasureBody,
          response: { 200: Receipt, 201: Receipt, 400: ErrorBody, 404: ErrorBody, ...authErrors },
        },
      },
      async (request, reply) => {
        requireAdmin(request)
        const { receipt, created, position } = await eraseSubject({ ...deps, files }, callerOf(request), request.body)
        // A member's profile is cached by every process (src/lookups/): its deactivation must show at once.
        if (created && receipt.kind === MEMBER_KIND) lookupsOf(deps).changed()
        await settle(deps, reply, position)
        return reply.code(created ? 201 : 200).send(receiptBody(receipt))
      },
    )

    app.get(
      '/api/privacy/erasures/',
      { schema: { tags: ['privacy'], summary: "The organization's erasure receipts, newest first (admins)", querystring: PageQuery, response: { 200: pageOf(Receipt), ...authErrors } } },
      async (request) => {
        const { orgId } = requireAdmin(request)
        const { limit, offset } = request.query
        const { count, rows } = await listErasures(db, orgId, { limit, offset })
        return { count, offset, limit, results: rows.map((row) => receiptBody(row.receipt)) }
      },
    )

    // A path per kind (`/api/privacy/subjects/contact/{id}/export/`): each names one kind of record by its id.
    for (const kind of subjectKinds) {
      app.get(
        `/api/privacy/subjects/${kind}/:id/export/`,
        {
          schema: {
            tags: ['privacy'],
            summary: `Everything personal held about a ${kind} (admins): a subject-access export`,
            description: 'Every personal field of every event of the person, with when and by whom it was written (GDPR Articles 15 and 20). 410 once the person was erased.',
            params: IdParams,
            response: { 200: SubjectExport, 404: ErrorBody, 410: ErrorBody, ...authErrors },
          },
        },
        async (request) => {
          requireAdmin(request)
          return exportSubject(deps, callerOf(request), { kind, id: request.params.id })
        },
      )
    }

    app.get(
      '/api/privacy/erasures/:id/',
      { schema: { tags: ['privacy'], summary: 'One erasure receipt (admins)', params: IdParams, response: { 200: Receipt, 404: ErrorBody, ...authErrors } } },
      async (request) => {
        const { orgId } = requireAdmin(request)
        return receiptBody((await orNotFound(erasureOf(db, orgId, request.params.id))).receipt)
      },
    )
  }
}
