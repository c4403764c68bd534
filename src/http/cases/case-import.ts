import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { commitCaseImport, previewCaseImport } from '../../commands/case/import-cases.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { CommitBody, ImportFileBody, ImportOutcome, ImportPreview } from '../kernel/schemas/imports.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody, 413: ErrorBody } as const
const COLUMNS = 'Columns: name, status and priority (required), description, case_type, closed_on (YYYY-MM-DD), account_name, contact_emails, assigned_emails, team_names and tags (several separated by `;`), resolved by name or email in the organization.'

/** CSV import of cases in two steps (commands/case/import-cases.ts), the same answers as the contacts' import. */
export function caseImportRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/api/cases/import/preview/', { schema: { tags: TAGS, summary: 'Check a CSV file of cases and keep it for commit', description: `Nothing is created. ${COLUMNS} A row is refused when it names what does not exist, repeats a case name (already in the organization or on an earlier row), or POST /api/cases/ would refuse it. The import id expires after 24 hours.`, consumes: ['multipart/form-data'], body: ImportFileBody, response: { 200: ImportPreview, ...errors } } }, async (request) => {
      const preview = await previewCaseImport(deps, callerOf(request), request.body.file.path)
      const { importId, expiresAt, total, refused, columns } = preview
      return { error: false as const, import_id: importId, expires_at: expiresAt, total_rows: total, valid_rows: total - refused.count, invalid_rows: refused.count, errors: refused.errors, preview: preview.preview, columns }
    })

    app.post('/api/cases/import/commit/', { schema: { tags: TAGS, summary: 'Create the valid rows of a previewed CSV file of cases, one case per row', description: 'Each row is created as POST /api/cases/ would create it, its own command: a row refused now is reported and the others are created. The import id works for the member who previewed it, within 24 hours, until committed; otherwise 404. A commit retried after a failure creates each row once.', body: CommitBody, response: { 200: ImportOutcome, ...errors } } }, async (request, reply) => {
      const { position, ...outcome } = await commitCaseImport(deps, callerOf(request), request.body.import_id)
      await settle(deps, reply, position)
      return { error: false as const, message: `${outcome.created} cases imported`, ...outcome }
    })
  }
}
