import { z } from 'zod'
import { solutionStreams } from '../commands/solution/solution.ts'
import { SOLUTION_STATUSES } from '../commands/solution/solution.ts'
import type { SolutionEvent } from '../commands/solution/solution.ts'
import { By, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { solutionsProjector } from '../projections/solution/solutions.ts'
import { str } from '../projections/search/search-documents.ts'
import type { ModuleManifest } from './manifest.ts'

// Solutions (solution-<id>): knowledge-base articles, commands/record.ts events.
const solutionShape = { title: z.string(), description: z.string().nullable(), status: z.enum(SOLUTION_STATUSES), is_published: z.boolean() }

/** Solutions: knowledge-base articles. */
export const solutionModule: ModuleManifest = {
  name: 'solution',
  events: noPersonalData(eventsOf<SolutionEvent>()({
    // solution-<id>
    SolutionCreated: { stream: 'solution', description: 'A knowledge-base solution (article) was created.', data: z.strictObject({ solution_id: Id, org_id: Id, ...solutionShape, created_by: By, ...at }) },
    SolutionUpdated: { stream: 'solution', description: 'Fields of a solution changed (review status, publication, text): the new values of those only.', data: z.strictObject({ ...z.object(solutionShape).partial().shape, ...at }) },
    SolutionDeleted: { stream: 'solution', description: 'A solution was (soft) deleted.', data: z.strictObject(at) },
  })),
  routes: async (deps) => {
    const { solutionRoutes } = await import('../http/solutions/solutions.ts')
    return [solutionRoutes(deps)]
  },
  projectors: [solutionsProjector],
  search: {
    kind: 'solution',
    order: 5,
    version: 0,
    streams: solutionStreams,
    events: { created: 'SolutionCreated', updated: 'SolutionUpdated', deleted: 'SolutionDeleted' },
    changes: 'flat',
    keys: ['title', 'description', 'status'],
    visibility: 'Solution',
    document: (f) => ({ title: str(f.title), subtitle: str(f.status), names: str(f.title), terms: str(f.description) }),
  },
  idKinds: [
    [/^\/api\/cases\/solutions\/\{id\}/, 'solution'],
  ],
}
