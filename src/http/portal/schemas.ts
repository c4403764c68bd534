import { z } from 'zod'
import { CASE_PRIORITIES, CASE_STATUSES, CASE_TYPES } from '../../commands/case/fields.ts'
import type { CaseRecord } from '../../projections/case/queries.ts'
import type { ContactRow } from '../../projections/contact/contacts.ts'
import type { SolutionRow } from '../../projections/solution/solutions.ts'
import { ErrorBody, iso } from '../kernel/schemas/common.ts'

/** The portal's answers: what a customer may read of a case or an article, and nothing of the team's (assignees, tags, internal notes, SLA). */
export const PortalContact = z.object({ id: z.uuid(), first_name: z.string(), last_name: z.string().nullable(), email: z.string() })

export const PortalSession = z.object({
  access_token: z.string().describe('HS256 JWT with `typ: "portal"`, `sub` the contact and `org_id`: for `Authorization: Bearer` on /api/portal/ routes only; every other route answers it 401'),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().describe('Seconds until the token expires; then the customer signs in by mail again'),
  contact: PortalContact,
  organization: z.object({ id: z.uuid(), name: z.string() }),
})

export const PortalCase = z.object({
  id: z.uuid(),
  name: z.string().describe("The case's subject"),
  status: z.enum(CASE_STATUSES),
  priority: z.enum(CASE_PRIORITIES),
  case_type: z.enum(CASE_TYPES).nullable(),
  description: z.string().nullable(),
  closed_on: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})

export const PortalComment = z.object({
  id: z.uuid(),
  comment: z.string(),
  from: z.enum(['customer', 'support']).describe('`customer`: written in the portal; `support`: a public reply of the team (internal notes are never shown)'),
  author: z.string().describe("The support member's first name (`Support` when they have none), or `You` for the customer"),
  created_at: z.string(),
})

export const PortalCaseDetail = PortalCase.extend({ comments: z.array(PortalComment).describe('Public comments, oldest first') })

export const PortalArticle = z.object({ id: z.uuid(), title: z.string(), description: z.string().nullable(), updated_at: z.string() })

export const PortalCaseBody = z.object({
  name: z.string().trim().min(1, 'This field is required.').max(255).describe("The case's subject"),
  description: z.string().max(10_000).nullable().optional(),
  priority: z.enum(CASE_PRIORITIES).optional().describe('Normal when not given'),
  case_type: z.enum(CASE_TYPES).nullable().optional(),
})

export const portalErrors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody } as const

export const contactView = (row: ContactRow): z.infer<typeof PortalContact> => ({ id: row.id, first_name: row.first_name, last_name: row.last_name, email: row.email ?? '' })

export const portalCaseView = (row: CaseRecord): z.infer<typeof PortalCase> => ({
  id: row.id,
  name: row.name,
  status: row.status,
  priority: row.priority,
  case_type: row.case_type,
  description: row.description,
  closed_on: row.closed_on,
  created_at: iso(row.created_at)!,
  updated_at: iso(row.updated_at)!,
})

export const articleView = (row: SolutionRow): z.infer<typeof PortalArticle> => ({ id: row.id, title: row.title, description: row.description, updated_at: iso(row.updated_at)! })
