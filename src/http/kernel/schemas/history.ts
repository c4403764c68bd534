import { z } from 'zod'
import { PageQuery, pageOf } from './common.ts'

/** Shapes every record's history route shares (deals, pipelines, tasks), and the detail routes' `as_of`. */

export const ActorRef = z.object({ id: z.uuid(), name: z.string().nullable().describe("The user's first and last name, else their email; null when the profile is gone") })

// The relation shape first: an object with from/to would also accept {added, removed} (both optional as unknown).
const Change = z.union([
  z.object({ added: z.array(z.string()), removed: z.array(z.string()) }).describe("A relation list (contacts, tags, teams, assigned_to; a pipeline's stages): the ids added and removed"),
  z.object({ from: z.unknown(), to: z.unknown() }).describe('A value before and after'),
])

export const HistoryEntry = z.object({
  position: z.string().describe('Global position of the event, `commit-prepare`'),
  revision: z.number().int().describe("The event's revision in its stream, from 0"),
  type: z.string().describe('The event type, e.g. OpportunityUpdated, OpportunityStageChanged, TaskMoved, TaskCommentAdded'),
  at: z.string(),
  actor: ActorRef.nullable().describe('Who caused it; null for system work and the organization API key'),
  changes: z.record(z.string(), Change).describe('Creation lists every field from null; a stage change names stage (codes), and pipeline and stage_kind when they change; comments: comment text; attachments: file name'),
  subject: z.object({ kind: z.enum(['comment', 'attachment', 'stage', 'line_item']), id: z.string(), name: z.string().nullable().describe('The file name, stage code or line item name; null for a comment') }).nullable(),
})
export const HistoryPage = pageOf(HistoryEntry)

export const HistoryQuery = PageQuery.extend({
  limit: z.coerce.number().int().min(0).default(50).describe('Default 50, no maximum'),
  order: z.enum(['asc', 'desc']).default('asc').describe('`asc`: oldest first (default); `desc`: newest first'),
})

/** For a detail route: `?as_of=` folds the record's events up to that instant (404 if it did not exist yet). */
export const AsOfQuery = z.object({
  as_of: z.iso
    .datetime({ offset: true })
    .transform((value) => new Date(value))
    .optional()
    .describe('ISO 8601 date-time: the record as it stood then (what it points at, named as it is now)'),
})
