import { z } from 'zod'
import type { LeadInput } from '../../commands/lead/lead.ts'
import { LEAD_FIELD_ALIASES } from './lead-body.ts'
import { LeadBody } from './schemas.ts'

const lead = LeadBody.shape
const same = (field: string) => `The same as ${field} (what some forms call it); ${field} wins`

/**
 * What a website's contact form sends to POST /api/leads/create-from-site/: a few lead fields,
 * validated by the lead body's own field schemas. Other keys (a submit button, a captcha token, the
 * site's own fields) are accepted and dropped, as the original does: an HTML form posts whatever it
 * holds, and refusing it would lose the visitor's lead over a field nobody asked them for.
 */
const captureFields = z.object({
  apikey: z.string().optional().describe("The organization's API key (or send it in the `Token` header)"),
    first_name: lead.first_name,
    last_name: lead.last_name,
    email: lead.email.describe('Required: a lead from the web must be reachable. Unique per organization among leads (400 naming email)'),
    phone: lead.phone,
    job_title: lead.job_title,
    title: lead.title,
    company_name: lead.company_name,
    company: lead.company_name.describe(same('company_name')),
    account_name: lead.company_name.describe(same('company_name')),
    description: lead.description,
    message: lead.description.describe(same('description')),
    source: lead.source.describe('§2.5 source; `other` when absent'),
  })

export const CaptureBody = captureFields
  .catchall(z.unknown())
  .describe('Other keys (a submit button, a captcha token) are accepted and ignored')
  .superRefine((body, context) => {
    if (!body.email) context.addIssue({ code: 'custom', path: ['email'], message: 'This field is required.' })
  })
  .transform((all): { apikey: string | undefined; input: LeadInput } => {
    // Only the lead fields go on: the catchall's keys stop here.
    const known = Object.fromEntries(Object.entries(all).filter(([key]) => key in captureFields.shape)) as z.output<typeof captureFields>
    const { apikey, job_title, ...body } = known
    const fields: Record<string, unknown> = { ...body, title: job_title !== undefined ? job_title : body.title }
    for (const [alias, field] of Object.entries(LEAD_FIELD_ALIASES)) {
      fields[field] ??= fields[alias]
      delete fields[alias]
    }
    return { apikey, input: { ...(fields as LeadInput), source: body.source ?? 'other', custom: { cfFields: {} } } }
  })
