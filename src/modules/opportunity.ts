import { opportunitiesProjector } from '../projections/opportunity/opportunities.ts'
import { stageChangesProjector } from '../projections/opportunity/stage-changes.ts'
import type { ModuleManifest } from './manifest.ts'

/** Deals (opportunities): the board, lists, history, stage changes, line items, comments and attachments. */
export const opportunityModule: ModuleManifest = {
  name: 'opportunity',
  routes: async (deps, files) => {
    const [{ stageChangeRoutes }, { opportunityHistoryRoutes }, { opportunityRoutes }, { opportunityListRoutes }, { opportunityNoteRoutes }, { opportunityLineItemRoutes }] = await Promise.all([import('../http/opportunities/stage-changes.ts'), import('../http/opportunities/opportunity-history.ts'), import('../http/opportunities/opportunities.ts'), import('../http/opportunities/opportunity-lists.ts'), import('../http/opportunities/opportunity-notes.ts'), import('../http/opportunities/opportunity-line-items.ts')])
    return [stageChangeRoutes(deps), opportunityHistoryRoutes(deps), opportunityRoutes(deps, files), opportunityListRoutes(deps), opportunityNoteRoutes(deps, files), opportunityLineItemRoutes(deps)]
  },
  projectors: [opportunitiesProjector, stageChangesProjector],
  idKinds: [
    [/^\/api\/opportunities\/comment\/\{id\}/, 'comment'],
    [/^\/api\/opportunities\/attachment\/\{id\}/, 'attachment'],
    [/^\/api\/attachments\/\{id\}/, 'attachment'],
    [/^\/api\/opportunities\/\{id\}/, 'deal'],
  ],
  idParams: { opportunity_id: 'deal', line_item_id: 'lineItem' },
}
