import { z } from 'zod'
import { MACRO_SCOPES } from '../commands/macro/macro.ts'
import type { MacroEvent } from '../commands/macro/macro.ts'
import { By, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { macrosProjector } from '../projections/macro/macros.ts'
import type { ModuleManifest } from './manifest.ts'

// macro-<id>
const fields = { title: z.string(), body: z.string(), scope: z.enum(MACRO_SCOPES), owner: Id.nullable(), is_active: z.boolean() }

/** Macros: canned replies, org-wide or personal, applied to a case with its fields filled in. */
export const macroModule: ModuleManifest = {
  name: 'macro',
  // A macro is the business's wording (a personal one is a member's working tool); a case's people are filled in when applied, never stored.
  events: noPersonalData(eventsOf<MacroEvent>()({
    MacroCreated: { stream: 'macro', description: 'A macro was created: its title, body (with `%placeholders%`), scope (`org`, shared, or `personal`) and owner (the member a personal macro belongs to; null for an org macro).', data: z.strictObject({ macro_id: Id, org_id: Id, ...fields, created_by: By, ...at }) },
    MacroUpdated: { stream: 'macro', description: "A macro's fields changed: only those, with their new values. Deleting an org macro turns it off (`is_active` false).", data: z.strictObject({ title: fields.title.optional(), body: fields.body.optional(), scope: fields.scope.optional(), owner: fields.owner.optional(), is_active: fields.is_active.optional(), by: By, ...at }) },
    MacroDeleted: { stream: 'macro', description: 'A personal macro was deleted by its owner.', data: z.strictObject({ by: By, ...at }) },
    MacroApplied: { stream: 'macro', description: 'A macro was applied to a case (its usage count).', data: z.strictObject({ case_id: Id, by: By, ...at }) },
  })),
  routes: async (deps) => {
    const { macroRoutes } = await import('../http/macros/macros.ts')
    return [macroRoutes(deps)]
  },
  projectors: [macrosProjector],
  idKinds: [[/^\/api\/macros\/\{id\}/, 'macro']],
}
