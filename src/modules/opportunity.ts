import { sql } from 'kysely'
import { z } from 'zod'
import { opportunityStreams } from '../commands/opportunity/opportunity.ts'
import { LEAD_SOURCES, OPPORTUNITY_TYPES } from '../commands/opportunity/enums.ts'
import { DISCOUNT_TYPES } from '../commands/opportunity/line-items.ts'
import type { OpportunityEvent } from '../commands/opportunity/opportunity.ts'
import { By, CustomValues, Day, Decimal, Id, Ids, Placement, at, changesOf, eventsOf, noteDefinitions, placementShape, noPersonalData } from '../events/event-schemas.ts'
import { opportunitiesProjector } from '../projections/opportunity/opportunities.ts'
import { stageChangesProjector } from '../projections/opportunity/stage-changes.ts'
import { str } from '../projections/search/search-documents.ts'
import { created, deleted, noteReadings, updatedChanges } from '../projections/record/record-kinds.ts'
import type { ModuleManifest } from './manifest.ts'

// Deals (opportunity-<id>).
const dealShape = {
  name: z.string(),
  account: Id.nullable(),
  opportunity_type: z.enum(OPPORTUNITY_TYPES).nullable(),
  currency: z.string().nullable(),
  amount: Decimal.nullable(),
  probability: z.number().min(0).max(100).nullable(),
  closed_on: Day.nullable(),
  lead_source: z.enum(LEAD_SOURCES).nullable(),
  description: z.string().nullable(),
  is_active: z.boolean(),
  contacts: Ids,
  tags: Ids,
  teams: Ids,
  assigned_to: Ids,
  closed_by: By,
  custom_fields: CustomValues,
}
const lineItemInputShape = { name: z.string(), description: z.string().nullable(), quantity: Decimal, unit_price: Decimal, discount_type: z.enum(DISCOUNT_TYPES).nullable(), discount_value: Decimal.nullable() }

/** Deals (opportunities): the board, lists, history, stage changes, line items, comments and attachments. */
export const opportunityModule: ModuleManifest = {
  name: 'opportunity',
  events: noPersonalData(eventsOf<OpportunityEvent>()({
    // opportunity-<id>
    OpportunityCreated: { stream: 'opportunity', description: 'A deal was created in a stage of a pipeline (v2: with its custom field values).', data: z.strictObject({ opportunity_id: Id, org_id: Id, ...dealShape, ...placementShape, created_by: By, kanban_order: z.number(), ...at }) },
    OpportunityUpdated: { stream: 'opportunity', description: "Fields of a deal changed: only those, each with its value before and after.", data: z.strictObject({ changes: changesOf(dealShape), ...at }) },
    OpportunityStageChanged: { stream: 'opportunity', description: 'A deal moved to another stage (or pipeline); `by` moved it.', data: z.strictObject({ from: Placement, to: Placement, by: By, ...at }) },
    OpportunityPositioned: { stream: 'opportunity', description: "A deal's card moved within its kanban column.", data: z.strictObject({ kanban_order: z.number(), ...at }) },
    OpportunityDeleted: { stream: 'opportunity', description: 'A deal was (soft) deleted.', data: z.strictObject(at) },
    ...noteDefinitions('Opportunity', 'opportunity', 'deal'),
    OpportunityLineItemAdded: { stream: 'opportunity', description: 'A line item was added to a deal (its amount follows in OpportunityUpdated).', data: z.strictObject({ line_item: z.strictObject({ id: Id, ...lineItemInputShape }), ...at }) },
    OpportunityLineItemChanged: { stream: 'opportunity', description: "A deal's line item changed: only the changed values.", data: z.strictObject({ line_item_id: Id, changes: z.strictObject(lineItemInputShape).partial(), ...at }) },
    OpportunityLineItemRemoved: { stream: 'opportunity', description: "A deal's line item was removed.", data: z.strictObject({ line_item_id: Id, ...at }) },
  })),
  routes: async (deps, files) => {
    const [{ stageChangeRoutes }, { opportunityHistoryRoutes }, { opportunityRoutes }, { opportunityListRoutes }, { opportunityNoteRoutes }, { opportunityLineItemRoutes }] = await Promise.all([import('../http/opportunities/stage-changes.ts'), import('../http/opportunities/opportunity-history.ts'), import('../http/opportunities/opportunities.ts'), import('../http/opportunities/opportunity-lists.ts'), import('../http/opportunities/opportunity-notes.ts'), import('../http/opportunities/opportunity-line-items.ts')])
    return [stageChangeRoutes(deps), opportunityHistoryRoutes(deps), opportunityRoutes(deps, files), opportunityListRoutes(deps), opportunityNoteRoutes(deps, files), opportunityLineItemRoutes(deps)]
  },
  projectors: [opportunitiesProjector, stageChangesProjector],
  search: {
    kind: 'deal',
    order: 2,
    version: 0,
    streams: opportunityStreams,
    events: { created: 'OpportunityCreated', updated: 'OpportunityUpdated', deleted: 'OpportunityDeleted' },
    changes: 'fromTo',
    // A stage move changes a deal's subtitle like an edit of its stage.
    alsoUpdatedBy: { OpportunityStageChanged: (data) => ({ stage: (data.to as { stage: string }).stage }) },
    keys: ['name', 'description', 'account', 'stage', 'assigned_to'],
    visibility: 'Opportunity',
    // The subtitle is the stage; the answer shows the account's name instead when the deal has one (projections/search/queries.ts).
    document: (f) => ({ title: str(f.name), subtitle: str(f.stage), names: str(f.name), terms: str(f.description) }),
  },
  record: {
    entityType: 'Opportunity',
    version: 0,
    table: 'opportunities',
    name: sql<string>`r.name`,
    page: '/pipeline',
    noun: 'deal',
    activity: {
      OpportunityCreated: created,
      OpportunityUpdated: updatedChanges,
      OpportunityStageChanged: { action: 'UPDATE', describe: (data) => `Moved the deal to ${String((data.to as { stage?: unknown } | undefined)?.stage ?? 'another stage')}` },
      OpportunityDeleted: deleted,
      OpportunityLineItemAdded: { action: 'UPDATE', describe: () => 'Added a line item' },
      OpportunityLineItemChanged: { action: 'UPDATE', describe: () => 'Changed a line item' },
      OpportunityLineItemRemoved: { action: 'UPDATE', describe: () => 'Removed a line item' },
      ...noteReadings('Opportunity'),
    },
    notifiedBy: { created: 'OpportunityCreated', updated: 'OpportunityUpdated', commented: 'OpportunityCommentAdded' },
  },
  idKinds: [
    [/^\/api\/opportunities\/comment\/\{id\}/, 'comment'],
    [/^\/api\/opportunities\/attachment\/\{id\}/, 'attachment'],
    [/^\/api\/attachments\/\{id\}/, 'attachment'],
    [/^\/api\/opportunities\/\{id\}/, 'deal'],
  ],
  idParams: { opportunity_id: 'deal', line_item_id: 'lineItem' },
}
