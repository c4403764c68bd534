import { caseSlaFiguresProjector } from '../projections/case/sla-figures.ts'
import type { ModuleManifest } from './manifest.ts'

/**
 * The cases analytics (issue 32, "one SLA clock, from events, used everywhere"): FRT, MTTR, SLA
 * attainment, backlog, agents, the service overview, drilldown and CSV export, every figure an
 * aggregate of the one SLA clock's reading of each case's SLA events (its read model,
 * projections/case/sla-figures.ts). It records no events of its own.
 */
export const caseAnalyticsModule: ModuleManifest = {
  name: 'case-analytics',
  routes: async (deps) => {
    const { caseAnalyticsRoutes } = await import('../http/cases/analytics.ts')
    return [caseAnalyticsRoutes(deps)]
  },
  projectors: [caseSlaFiguresProjector],
}
