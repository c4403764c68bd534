import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { importLeads } from '../../commands/lead/import-leads.ts'
import type { LeadRows } from '../../commands/lead/import-leads.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { LEAD_FIELD_ALIASES, splitBody } from './lead-body.ts'
import type { LeadBodyIn } from './lead-body.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { LeadUploadOutcome, LeadsFileBody } from '../kernel/schemas/imports.ts'
import { LeadBody } from './schemas.ts'

/**
 * A lead row of a CSV file, for importLeads over HTTP or not: the POST body's fields (a file aside),
 * their aliases and custom values `cf_<key>`, so a row is accepted exactly when POST would accept it.
 */
export const LEAD_ROWS: LeadRows<LeadBodyIn> = {
  shape: { schema: LeadBody, fields: Object.keys(LeadBody.shape).filter((field) => field !== 'lead_attachment'), aliases: LEAD_FIELD_ALIASES, passThrough: (column) => column.startsWith('cf_') },
  inputOf: (body) => splitBody(body).input,
  emailOf: (body) => body.email,
}

/** POST /api/leads/upload/ (§4.8; issue 7): a CSV file of leads, each valid row created at once (commands/lead/import-leads.ts). */
export function leadUploadRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    const description =
      'Every row is checked as POST /api/leads/ would check it (an email taken in the organization or on an earlier row is a row error) and the valid ones are created; answers the counts and the first rows refused. Columns: the lead fields (also company or account_name for company_name, message for description) and cf_<key> custom values.'
    app.post('/api/leads/upload/', { schema: { tags: ['leads'], summary: 'Create leads from a CSV file (multipart `leads_file` or `file`)', description, consumes: ['multipart/form-data'], body: LeadsFileBody, response: { 200: LeadUploadOutcome, 400: ErrorBody, ...authErrors, 413: ErrorBody } } }, async (request, reply) => {
      const { position, ...outcome } = await importLeads(deps, callerOf(request), request.body.path, LEAD_ROWS)
      await settle(deps, reply, position)
      return { error: false as const, message: `${outcome.created} leads created`, ...outcome }
    })
  }
}
