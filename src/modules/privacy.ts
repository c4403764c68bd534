import { z } from 'zod'
import type { ErasureEvent } from '../commands/privacy/erasure.ts'
import { At, By, Id, eventsOf } from '../events/event-schemas.ts'
import { erasuresProjector } from '../projections/privacy/erasures.ts'
import type { IdKind, ModuleOverModules } from './manifest.ts'

/**
 * Privacy (issue 31, docs/personal-data.md): erasure of the people the other modules declare
 * (`subjects`: contacts, leads, …), whose personal fields the event store seals (src/privacy/),
 * and the receipts. A module whose records are people joins by declaring `subjects` in its manifest.
 */
export const privacyModule: ModuleOverModules = (modules) => {
  const kinds = modules.flatMap((module) => module.subjects ?? [])
  return {
    name: 'privacy',
    events: eventsOf<ErasureEvent>()({
      // erasure-<kind>-<id>
      SubjectErased: {
        stream: 'erasure',
        description: "A person was erased: their data key destroyed, their email claims released, their record's files deleted and the read models that held their data blank it on this event. The receipt: the kinds of fields and how many events held them, those read models and the ones that read the person's events but hold none of their fields, when the key's last backup expires; never a personal value.",
        data: z.strictObject({
          receipt_id: Id,
          org_id: Id,
          kind: z.string(),
          subject_id: Id,
          fields: z.array(z.string()),
          events: z.number().int().min(0),
          read_models: z.array(z.string()),
          read_models_holding_none: z.array(z.string()).optional(),
          files_deleted: z.number().int().min(0),
          key_backups_expire_at: At,
          by: By,
          at: At,
        }),
        personal: [],
      },
    }),
    routes: async (deps, files) => {
      const { privacyRoutes } = await import('../http/privacy/privacy.ts')
      return kinds.length ? [privacyRoutes(deps, files, kinds as [string, ...string[]])] : []
    },
    projectors: [erasuresProjector],
    idKinds: [[/^\/api\/privacy\/erasures\/\{id\}/, 'erasure'], ...kinds.map((kind): IdKind => [new RegExp(`^/api/privacy/subjects/${kind}/\\{id\\}`), kind])],
  }
}
