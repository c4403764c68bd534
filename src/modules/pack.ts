import { z } from 'zod'
import { SAMPLE_KINDS } from '../commands/pack/sample-data.ts'
import type { SampleDataEvent } from '../commands/pack/sample-data.ts'
import { By, Id, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import type { ModuleManifest } from './manifest.ts'

// sample_data-<org id>: the records themselves are events of their own modules.
const SampleRecord = z.strictObject({ kind: z.enum(SAMPLE_KINDS), id: Id, name: z.string() })
const SkippedItem = z.strictObject({ kind: z.enum(SAMPLE_KINDS), name: z.string(), reason: z.string() })

/** Sample-data packs: demo records a new organization can apply and clear again. */
export const packModule: ModuleManifest = {
  name: 'pack',
  events: noPersonalData(eventsOf<SampleDataEvent>()({
    SampleDataApplied: { stream: 'sample_data', description: "A pack's sample data was applied: the records it created (each by its own module's events), numbered by `generation`, and the items it skipped.", data: z.strictObject({ pack_id: z.string(), pack_version: z.number().int(), generation: z.number().int().min(0), records: z.array(SampleRecord), skipped: z.array(SkippedItem), by: By, ...at }) },
    SampleDataCleared: { stream: 'sample_data', description: 'The sample data was cleared: the records deleted (each by its own module\'s delete), and those kept because real records point at them (still sample data).', data: z.strictObject({ deleted: z.array(SampleRecord), retained: z.array(SampleRecord), by: By, ...at }) },
  })),
  routes: async (deps) => {
    const { packRoutes } = await import('../http/packs/packs.ts')
    return [packRoutes(deps)]
  },
  // Packs are this server's, not an organization's: an unknown id is 404 for everyone.
  idParams: { pack_id: 'pack' },
}
