import { z } from 'zod'
import type { TagEvent } from '../commands/tag/tag.ts'
import { By, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { tagsProjector } from '../projections/tag/tags.ts'
import type { ModuleManifest } from './manifest.ts'

/** Tags: labels on accounts, contacts, leads, deals and tasks; admins rename, archive and merge them. */
export const tagModule: ModuleManifest = {
  name: 'tag',
  // tag-<id>
  events: noPersonalData(eventsOf<TagEvent>()({
    TagCreated: { stream: 'tag', description: 'A tag was created (v2: with its description).', data: z.strictObject({ tag_id: Id, org_id: Id, name: z.string(), color: z.string().nullable(), description: z.string(), created_by: By, ...at }) },
    TagUpdated: { stream: 'tag', description: 'A tag was renamed, recoloured or redescribed: only the changed values.', data: z.strictObject({ name: z.string().optional(), color: z.string().nullable().optional(), description: z.string().optional(), ...at }) },
    TagDeleted: { stream: 'tag', description: 'A tag was (soft) deleted: its name freed, hidden from records (no longer decided by the API: tags are archived).', data: z.strictObject(at) },
    TagRestored: { stream: 'tag', description: 'A deleted tag was restored.', data: z.strictObject(at) },
    TagArchived: { stream: 'tag', description: 'A tag was archived (turned off): no longer offered for new records; records keep it, and it keeps its name.', data: z.strictObject(at) },
    TagUnarchived: { stream: 'tag', description: 'An archived tag was turned back on.', data: z.strictObject(at) },
    TagMerged: { stream: 'tag', description: "A tag was merged into another: its records were retagged in the same append, and it is archived (older merges also freed the source's name).", data: z.strictObject({ into_tag_id: Id, ...at }) },
  })),
  routes: async (deps) => {
    const { tagRoutes } = await import('../http/tags/tags.ts')
    return [tagRoutes(deps)]
  },
  projectors: [tagsProjector],
  idKinds: [
    [/^\/api\/tags\/\{id\}/, 'tag'],
  ],
}
