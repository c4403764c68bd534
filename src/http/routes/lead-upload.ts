import { createReadStream } from 'node:fs'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { definitionsOf } from '../../projections/custom-fields.ts'
import type { AppDeps } from '../app.ts'
import { requestCommands } from '../commands.ts'
import { checkCsv, createRows, csvRows } from '../csv-import.ts'
import type { CsvColumns, CsvShape } from '../csv-import.ts'
import { LEAD_FIELD_ALIASES, createLead, splitBody } from '../lead-create.ts'
import type { LeadBodyIn } from '../lead-create.ts'
import { identityOf } from '../plugins/auth.ts'
import { ErrorBody, authErrors } from '../schemas/common.ts'
import { LeadUploadOutcome, LeadsFileBody } from '../schemas/imports.ts'
import { LeadBody } from '../schemas/leads.ts'

/** A lead row's columns: the POST body's fields (a file aside), their aliases and custom values `cf_<key>`. */
const LEAD_CSV: CsvShape<LeadBodyIn> = {
  schema: LeadBody,
  fields: Object.keys(LeadBody.shape).filter((field) => field !== 'lead_attachment'),
  aliases: LEAD_FIELD_ALIASES,
  passThrough: (column) => column.startsWith('cf_'),
}

/**
 * POST /api/leads/upload/ (§4.8; issue 7): a CSV file of leads, each valid row created at once
 * through POST /api/leads/'s path (createLead). A malformed or oversized file creates nothing.
 */
export function leadUploadRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const description =
      'Every row is checked as POST /api/leads/ would check it (an email taken in the organization or on an earlier row is a row error) and the valid ones are created; answers the counts and the first rows refused. Columns: the lead fields (also company or account_name for company_name, message for description) and cf_<key> custom values.'
    app.post('/api/leads/upload/', { schema: { tags: ['leads'], summary: 'Create leads from a CSV file (multipart `leads_file` or `file`)', description, consumes: ['multipart/form-data'], body: LeadsFileBody, response: { 200: LeadUploadOutcome, 400: ErrorBody, ...authErrors, 413: ErrorBody } } }, async (request, reply) => {
      const path = request.body.path
      const columns: CsvColumns = { recognized: [], ignored: [] }
      await checkCsv(createReadStream(path), LEAD_CSV, columns)
      const customFields = await definitionsOf(deps.db, identityOf(request).orgId, 'leads', { activeOnly: false })
      const commands = requestCommands(deps, request, reply)
      const outcome = await createRows(csvRows(createReadStream(path), LEAD_CSV, { recognized: [], ignored: [] }), {
        uniqueField: 'email',
        unique: (body) => body.email,
        create: (body) => createLead(deps, request, reply, commands, splitBody(body).input, customFields).then(() => undefined),
        settle: commands.settle,
      })
      return { error: false as const, message: `${outcome.created} leads created`, ...outcome, columns }
    })
  }
}
