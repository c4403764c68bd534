import type { z } from 'zod'
import { mayAccess } from '../../visibility/policy.ts'
import type { Actor } from '../../commands/caller.ts'
import type { Db } from '../../db/database.ts'
import type { Deps } from '../../deps.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { agingStatus, daysSince } from '../../projections/opportunity/aging.ts'
import { liveContacts } from '../../projections/contact/contacts.ts'
import { attachmentsOf, commentsOf, lineItemsOf } from '../../projections/opportunity/opportunities.ts'
import type { LineItemRow, OpportunityView } from '../../projections/opportunity/opportunities.ts'
import type { CardRow } from '../../projections/opportunity/queries.ts'
import { discountAmount, lineItemsTotal } from '../../commands/opportunity/line-items.ts'
import type { LineItem } from '../../commands/opportunity/line-items.ts'
import { notesAnswer } from '../kernel/note-views.ts'
import { contactRef, nameRefs, profileRefs, tagRefs } from '../kernel/relations.ts'
import type { ContactRef, NameRef } from '../kernel/relations.ts'
import type { Card, Opportunity } from './schemas.ts'

/**
 * Deal rows as response bodies. The records they point at (accounts, contacts, tags, teams,
 * profiles) are fetched once per batch of rows, never per row, so a page of any size costs the
 * same handful of queries.
 */
type Related = {
  lineItems: Map<string, LineItemRow[]>
  /** Keys of the organization's active custom fields for deals: values of others are not shown. */
  customKeys: Set<string>
  accounts: Map<string, NameRef>
  teams: Map<string, NameRef>
  tags: Map<string, z.infer<typeof Card>['tags'][number]>
  profiles: Map<string, z.infer<typeof Card>['assigned_to'][number]>
  contacts: Map<string, z.infer<typeof ContactRef>>
}

const byId = <T extends { id: string }>(rows: readonly T[]) => new Map(rows.map((row) => [row.id, row]))
const pick = <T>(map: Map<string, T>, ids: readonly string[]): T[] => ids.flatMap((id) => map.get(id) ?? [])
const unique = (lists: readonly (readonly string[])[]) => [...new Set(lists.flat())]

/** Rows whose related records are looked up: cards lack the relations only the full view shows. */
type RelatedIds = CardRow & Partial<Pick<OpportunityView, 'teams' | 'contacts' | 'closed_by'>>

/** What views read: the database, and the cached lookups where the app has them. */
export type ViewSource = Pick<Deps, 'db' | 'lookups'>

/** `withLineItems` false: the caller has the rows' line items already (cardsOf's `lineItemsThen`). */
async function related(source: ViewSource, orgId: string, rows: readonly RelatedIds[], withLineItems = true): Promise<Related> {
  const { db } = source
  const [accounts, teams, tags, profiles, contacts, definitions, items] = await Promise.all([
    nameRefs(db, 'accounts', orgId, unique(rows.map((r) => (r.account ? [r.account] : [])))),
    nameRefs(db, 'teams', orgId, unique(rows.map((r) => r.teams ?? []))),
    tagRefs(db, orgId, unique(rows.map((r) => r.tags))),
    profileRefs(db, orgId, unique(rows.map((r) => [...r.assigned_to, ...(r.created_by ? [r.created_by] : []), ...(r.closed_by ? [r.closed_by] : [])]))),
    liveContacts(db, orgId, unique(rows.map((r) => r.contacts ?? []))),
    lookupsOf(source).customFields(orgId, 'opportunities'),
    withLineItems ? lineItemsOf(db, rows.map((r) => r.id)) : [],
  ])
  const lineItems = new Map<string, LineItemRow[]>()
  for (const item of items) lineItems.set(item.opportunity_id, [...(lineItems.get(item.opportunity_id) ?? []), item])
  return { lineItems, customKeys: new Set(definitions.filter((d) => d.is_active).map((d) => d.key)), accounts, teams, tags: byId(tags), profiles: byId(profiles), contacts: byId(contacts.map(contactRef)) }
}

const aging = (row: CardRow, now: Date) => {
  const days = daysSince(row.stage_changed_at, now)
  return { days_in_stage: days, aging_status: agingStatus(row.stage_kind, days, row) }
}

const AGO_UNITS: [string, number][] = [['year', 31_536_000], ['month', 2_592_000], ['day', 86_400], ['hour', 3_600], ['minute', 60]]
const secondsSince = (then: Date, now: Date) => Math.max(0, Math.floor((now.getTime() - then.getTime()) / 1000))

/** "just now", "5 minutes ago", "3 days ago": how the original renders created_on_arrow. */
export function timeAgo(then: Date, now: Date): string {
  const seconds = secondsSince(then, now)
  for (const [unit, size] of AGO_UNITS) {
    const n = Math.floor(seconds / size)
    if (n >= 1) return n === 1 ? `a${unit === 'hour' ? 'n' : ''} ${unit} ago` : `${n} ${unit}s ago`
  }
  return 'just now'
}

/**
 * The instant (epoch ms) from which `timeAgo(then, ·)` may answer otherwise than at `now`, for an
 * answer kept while its texts hold: the next count of the unit it shows, or a larger unit's first
 * if that comes sooner (a year is no whole number of months). Smaller units do not show.
 */
export function timeAgoChangesAt(then: Date, now: Date): number {
  const seconds = secondsSince(then, now)
  let next = Infinity
  for (const [, size] of AGO_UNITS) {
    const n = Math.floor(seconds / size)
    next = Math.min(next, (n + 1) * size)
    if (n >= 1) break
  }
  return then.getTime() + next * 1000
}

function cardOf(row: CardRow, rel: Related, actor: Actor, now: Date, lineItems: readonly LineItem[]): z.infer<typeof Card> {
  return {
    id: row.id,
    name: row.name,
    pipeline: row.pipeline_id,
    stage: row.stage,
    stage_label: row.stage_label,
    stage_kind: row.stage_kind,
    amount: row.amount,
    opportunity_amount: row.amount,
    currency: row.currency,
    probability: row.probability,
    closed_on: row.closed_on,
    kanban_order: row.kanban_order,
    account: row.account ? (rel.accounts.get(row.account) ?? null) : null,
    assigned_to: pick(rel.profiles, row.assigned_to),
    tags: pick(rel.tags, row.tags),
    line_items: lineItems.map(({ id, name, quantity, unit_price, discount_type, discount_value }) => ({ id, name, quantity, unit_price, discount_type, discount_value })),
    ...aging(row, now),
    stage_changed_at: row.stage_changed_at.toISOString(),
    next_activity: null,
    can_move: mayAccess('Opportunity', { createdBy: row.created_by, assignedTo: row.assigned_to }, actor),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** Cards for board rows; `lineItemsThen` replaces the read model's line items (a board as of an instant, a card the command just folded). */
export async function cardsOf(source: ViewSource, orgId: string, rows: readonly CardRow[], actor: Actor, now: Date, lineItemsThen?: ReadonlyMap<string, readonly LineItem[]>): Promise<z.infer<typeof Card>[]> {
  const rel = await related(source, orgId, rows, !lineItemsThen)
  return rows.map((row) => cardOf(row, rel, actor, now, (lineItemsThen ?? rel.lineItems).get(row.id) ?? []))
}

export async function opportunitiesOf(source: ViewSource, org: NameRef, rows: readonly OpportunityView[], now: Date): Promise<z.infer<typeof Opportunity>[]> {
  const rel = await related(source, org.id, rows)
  return rows.map((row) => {
    const items = rel.lineItems.get(row.id) ?? []
    return {
      id: row.id,
      name: row.name,
      account: row.account ? (rel.accounts.get(row.account) ?? null) : null,
      pipeline: row.pipeline_id,
      stage: row.stage,
      opportunity_type: row.opportunity_type,
      currency: row.currency,
      amount: row.amount,
      probability: row.probability,
      closed_on: row.closed_on,
      lead_source: row.lead_source,
      description: row.description,
      is_active: row.is_active,
      contacts: pick(rel.contacts, row.contacts),
      tags: pick(rel.tags, row.tags),
      teams: pick(rel.teams, row.teams),
      assigned_to: pick(rel.profiles, row.assigned_to),
      closed_by: row.closed_by ? (rel.profiles.get(row.closed_by) ?? null) : null,
      created_by: row.created_by ? (rel.profiles.get(row.created_by) ?? null) : null,
      created_at: row.created_at.toISOString(),
      org,
      created_on_arrow: timeAgo(row.created_at, now),
      amount_source: items.length ? ('CALCULATED' as const) : ('MANUAL' as const),
      stage_label: row.stage_label,
      stage_kind: row.stage_kind,
      stage_changed_at: row.stage_changed_at.toISOString(),
      ...aging(row, now),
      line_items: items.map(lineItemBody),
      line_items_total: items.length ? lineItemsTotal(items) : '0',
      custom_fields: Object.fromEntries(Object.entries(row.custom_fields ?? {}).filter(([key]) => rel.customKeys.has(key))),
    }
  })
}

/** A deal's live comments and attachments as the detail and the comment answer show them (one profile lookup for both). */
export async function notesOf(db: Db, orgId: string, opportunityId: string) {
  const [comments, attachments] = await Promise.all([commentsOf(db, opportunityId), attachmentsOf(db, opportunityId)])
  return notesAnswer(db, orgId, { comments, attachments }, (id) => `/api/attachments/${id}/download/`)
}

/** A line item as the detail and the line-item routes answer it. */
export const lineItemBody = (item: LineItemRow) => ({
  id: item.id,
  name: item.name,
  description: item.description,
  quantity: item.quantity,
  unit_price: item.unit_price,
  discount_type: item.discount_type,
  discount_value: item.discount_value,
  discount_amount: discountAmount(item),
  total: item.total,
  created_at: item.created_at.toISOString(),
  updated_at: item.updated_at.toISOString(),
})
