import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { commitRecordImport, previewRecordImport } from '../../commands/imports/record-import.ts'
import type { RecordNames } from '../../commands/record.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, settle } from './commands.ts'
import type { RecordWriteRoutes } from './record-routes.ts'
import { ROUTE_INDEX } from './not-built.ts'
import { ErrorBody, authErrors } from './schemas/common.ts'
import { CommitBody, ImportFileBody, ImportOutcome, ImportPreview } from './schemas/imports.ts'

type App = Parameters<FastifyPluginAsyncZod>[0]

/** Whether the spec's route index lists a CSV import for this record module (contacts does). */
export const importsListed = (plural: string) => ROUTE_INDEX.some((route) => route.path === `/api/${plural}/import/preview/`)

/** CSV import routes of a plain record module (§4.8 `/api/<plural>/import/preview/` and `commit/`): commands/imports/record-import.ts does the work. */
export function recordImportRoutes<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames>(app: App, deps: Deps, options: RecordWriteRoutes<Fields, Unique, N>): void {
  const { plural, unique } = options
  const tags = [plural]
  const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody, 413: ErrorBody } as const

  app.post(`/api/${plural}/import/preview/`, { schema: { tags, summary: `Check a CSV file of ${plural} and keep it for commit`, description: `Nothing is created. Rows are checked as POST /api/${plural}/ would check them; a ${unique.field} already in the organization or on an earlier row is a row error. The import id expires after 24 hours.`, consumes: ['multipart/form-data'], body: ImportFileBody, response: { 200: ImportPreview, ...errors } } }, async (request) => {
    const preview = await previewRecordImport(deps, callerOf(request), options, request.body.file.path)
    const { importId, expiresAt, total, refused, columns } = preview
    return { error: false as const, import_id: importId, expires_at: expiresAt, total_rows: total, valid_rows: total - refused.count, invalid_rows: refused.count, errors: refused.errors, preview: preview.preview, columns }
  })

  app.post(`/api/${plural}/import/commit/`, { schema: { tags, summary: `Create the valid rows of a previewed CSV file of ${plural}`, description: `Each row goes through POST /api/${plural}/'s rules again: rows refused now (a ${unique.field} taken since the preview) are reported. The import id works for the member who previewed it, within 24 hours, until committed; otherwise 404. Each row's record id derives from the import and the row, so a commit retried after a failure (or run twice at once) creates each row once.`, body: CommitBody, response: { 200: ImportOutcome, ...errors } } }, async (request, reply) => {
    const { position, ...outcome } = await commitRecordImport(deps, callerOf(request), options, request.body.import_id)
    await settle(deps, reply, position)
    return { error: false as const, message: `${outcome.created} ${plural} imported`, ...outcome }
  })
}
