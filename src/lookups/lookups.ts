import type pg from 'pg'
import type { CustomFieldModule } from '../commands/custom-field/custom-field.ts'
import type { Db } from '../db/database.ts'
import type { ReadReplica } from '../db/read-replica.ts'
import { startNotifications } from '../eventstore/postgres-notifications.ts'
import type { Notifications } from '../eventstore/postgres-notifications.ts'
import { organizationById } from '../identity/organizations.ts'
import type { OrganizationRow } from '../identity/organizations.ts'
import { membershipOf } from '../identity/queries.ts'
import type { Membership } from '../identity/queries.ts'
import { definitionsOf } from '../projections/custom-field/custom-fields.ts'
import type { CustomFieldDefinitionRow } from '../projections/custom-field/custom-fields.ts'
import { cachedLookup } from './cached-lookup.ts'

/**
 * What nearly every request reads and almost nothing writes (issue 20): the caller's membership
 * (authentication), the organization's settings, and a module's custom field definitions.
 */
export type Lookups = {
  /** The membership with its active flags, or undefined: authentication decides on it. */
  membership(userId: string, orgId: string): Promise<Membership | undefined>
  /** The organization, or a NotFoundError. */
  organization(orgId: string): Promise<OrganizationRow>
  /** All live definitions of the module (inactive ones too), in display order; callers filter on is_active. */
  customFields(orgId: string, module: CustomFieldModule): Promise<readonly CustomFieldDefinitionRow[]>
  /**
   * Call after a committed write to profiles, users or organizations, or once a custom field
   * change's read model is applied: this process forgets at once, every other process on NOTIFY.
   */
  changed(): void
  close(): Promise<void>
}

/** Lookups as plain queries: for deps built without a cache (tests, one-off tools). */
export function directLookups(db: Db): Lookups {
  return {
    membership: (userId, orgId) => membershipOf(db, userId, orgId),
    organization: (orgId) => organizationById(db, orgId),
    customFields: (orgId, module) => definitionsOf(db, orgId, module, { activeOnly: false }),
    changed: () => {},
    close: async () => {},
  }
}

/** The deps' lookups: cached where the composition root made them so. */
// The deps' shape, not Deps itself: deps.ts names Lookups, and the import graph stays without circles.
export const lookupsOf = (deps: { db: Db; lookups?: Lookups }): Lookups => deps.lookups ?? directLookups(deps.db)

export const LOOKUPS_CHANNEL = 'crm_lookups'
const MAX_ENTRIES = 10_000
/** The staleness bound should a change's NOTIFY be lost while the listener stays connected. */
export const LOOKUP_MAX_AGE_MS = 5_000

export type CachedLookupsOptions = { db: Db; pool: pg.Pool; readReplica?: ReadReplica; maxAgeMs?: number }

/**
 * Lookups cached per process. Any change clears all three caches, here and (through NOTIFY on
 * LOOKUPS_CHANNEL) in every process on the database: changes are admin actions, rare next to
 * reads. While the LISTEN connection is not in place (before the first lookup, after a drop) a
 * change elsewhere could go unheard, so nothing is served from or kept in the cache; it starts
 * empty again once LISTEN is back.
 */
export function cachedLookups(options: CachedLookupsOptions): Lookups {
  const { db, readReplica, maxAgeMs = LOOKUP_MAX_AGE_MS } = options
  const direct = directLookups(db)
  const notifications: Notifications = startNotifications(options.pool, LOOKUPS_CHANNEL)
  let unsubscribe: (() => void) | undefined
  const trusted = () => {
    unsubscribe ??= notifications.subscribe(clear)
    return notifications.listening()
  }
  // A replica may lag behind the write that cleared the cache: what is kept must come from the primary.
  const onPrimary = <T>(load: () => Promise<T>) => (readReplica ? readReplica.onPrimary(load) : load())
  const settings = { maxEntries: MAX_ENTRIES, maxAgeMs, trusted }
  const memberships = cachedLookup({ ...settings, keyOf: (userId: string, orgId: string) => `${orgId} ${userId}`, load: (userId, orgId) => onPrimary(() => direct.membership(userId, orgId)) })
  const organizations = cachedLookup({ ...settings, keyOf: (orgId: string) => orgId, load: (orgId) => onPrimary(() => direct.organization(orgId)) })
  const customFields = cachedLookup({ ...settings, keyOf: (orgId: string, module: CustomFieldModule) => `${orgId} ${module}`, load: (orgId, module) => onPrimary(() => direct.customFields(orgId, module)) })
  function clear(): void {
    for (const cache of [memberships, organizations, customFields]) cache.clear()
  }
  return {
    membership: memberships.get,
    organization: organizations.get,
    customFields: customFields.get,
    changed() {
      clear()
      notifications.appended()
    },
    close: () => notifications.close(),
  }
}
