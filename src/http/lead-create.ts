import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { z } from 'zod'
import type { Definition } from '../commands/custom-field/values.ts'
import type { Conversion, LeadCommand, LeadInput } from '../commands/lead/lead.ts'
import { withOptionalClaim } from '../commands/unique-name.ts'
import { definitionsOf } from '../projections/custom-fields.ts'
import type { AppDeps } from './app.ts'
import type { RequestCommands } from './commands.ts'
import { actorOf } from './deal-access.ts'
import { runLeadCommand } from './lead-conversion.ts'
import { identityOf } from './plugins/auth.ts'
import type { UploadedFile } from './plugins/bodies.ts'
import { checkRelations } from './relations.ts'
import { LeadBody } from './schemas/leads.ts'
import type { LeadPatch } from './schemas/leads.ts'

/** Lead emails are unique per organization, case-insensitively (name claims of this scope). */
export const LEAD_EMAIL_SCOPE = 'lead_email'

/** Other names a CSV column or a web form gives lead fields. */
export const LEAD_FIELD_ALIASES: Readonly<Record<string, string>> = { company: 'company_name', account_name: 'company_name', message: 'description' }

export type LeadBodyIn = z.infer<typeof LeadPatch>
const WRITABLE = Object.keys(LeadBody.shape).filter((key) => key !== 'lead_attachment' && key !== 'custom_fields')

/** A validated body as the decider's input (writable fields, custom values apart) and its file. */
export function splitBody(body: LeadBodyIn): { input: LeadInput; upload: UploadedFile | undefined } {
  const input = Object.fromEntries(Object.entries(body).filter(([key, value]) => WRITABLE.includes(key) && value !== undefined)) as LeadInput
  return { input: { ...input, custom: { cfFields: body, customFields: body.custom_fields } }, upload: body.lead_attachment as UploadedFile | undefined }
}

/**
 * Creates a lead for the request's caller: relations checked, the email claimed, the create run
 * (converting first when created as converted). POST /api/leads/, the CSV upload and the web
 * capture all come here. `customFields` spares an import looking the definitions up per row.
 * Answers the id and what conversion created; the caller settles.
 */
export async function createLead(deps: AppDeps, request: FastifyRequest, reply: FastifyReply, commands: RequestCommands, input: LeadInput, customFields?: readonly Definition[]): Promise<{ id: string } & Partial<Conversion>> {
  const { orgId } = identityOf(request)
  await checkRelations(deps.db, orgId, input)
  const definitions = customFields ?? (await definitionsOf(deps.db, orgId, 'leads', { activeOnly: false }))
  const actor = actorOf(request)
  const id = randomUUID()
  const command: LeadCommand = { type: 'CreateLead', leadId: id, orgId, actor, at: deps.clock().toISOString(), customFields: definitions, input }
  const claim = { scope: LEAD_EMAIL_SCOPE, orgId, ownerId: id, name: input.email ?? null, field: 'email' }
  const converted = await withOptionalClaim(commands.run, claim, () => runLeadCommand(deps, request, reply, commands.run, id, command, actor))
  return { id, ...converted }
}
