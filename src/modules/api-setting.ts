import { z } from 'zod'
import type { ApiSettingEvent } from '../commands/api-setting/api-setting.ts'
import { By, Id, Ids, at, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import { apiSettingsProjector } from '../projections/api-setting/api-settings.ts'
import type { ModuleManifest } from './manifest.ts'

// api_setting-<id>. The key never enters the log: its SHA-256 hash (hex) and its first characters.
const fields = { title: z.string(), website: z.string().nullable(), lead_assigned_to: Ids, tags: Ids }

/** API settings: the keys an organization hands to its websites (admins). */
export const apiSettingModule: ModuleManifest = {
  name: 'api-setting',
  events: noPersonalData(eventsOf<ApiSettingEvent>()({
    ApiSettingCreated: { stream: 'api_setting', description: 'An API setting was created with a new key: its title, website, lead assignees and tags, and the key\'s hash and prefix (never the key).', data: z.strictObject({ api_setting_id: Id, org_id: Id, ...fields, key_hash: z.string(), key_prefix: z.string(), created_by: By, ...at }) },
    ApiSettingUpdated: { stream: 'api_setting', description: "An API setting's title, website, assignees or tags changed: only those, with their new values.", data: z.strictObject({ title: fields.title.optional(), website: fields.website.optional(), lead_assigned_to: Ids.optional(), tags: Ids.optional(), by: By, ...at }) },
    ApiSettingDeleted: { stream: 'api_setting', description: 'An API setting and its key were deleted.', data: z.strictObject({ by: By, ...at }) },
  })),
  routes: async (deps) => {
    const { apiSettingRoutes } = await import('../http/api-settings/api-settings.ts')
    return [apiSettingRoutes(deps)]
  },
  projectors: [apiSettingsProjector],
  idKinds: [[/^\/api\/api-settings\/\{id\}/, 'api_setting']],
}
