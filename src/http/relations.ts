import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { Db } from '../db/database.ts'
import { ValidationError } from '../errors.ts'
import { activeProfileIds, membersByIds } from '../identity/users.ts'
import { liveContactIds } from '../projections/contacts.ts'
import { formList } from './schemas/form-values.ts'
import { liveTags, liveTagIds } from '../projections/tags.ts'
import { teamIds } from '../projections/teams.ts'

/**
 * What the record routes (accounts, contacts, later deals) share about the ids a record points
 * at: body and filter schemas, the existence checks made before a command (deciders stay pure),
 * and the nested shapes a detail answers with.
 */

const lower = (id: string) => id.toLowerCase()
export const isUuid = (value: string) => z.uuid().safeParse(value).success

/** A relation list in a body: uuids of records of the caller's organization, duplicates dropped. */
export const IdList = (what: string) =>
  formList(z.array(z.string()))
    // Checked on the list, not per item, so a malformed id is reported under the field's own name.
    .refine((ids) => ids.every(isUuid), 'Expected a list of ids (uuids).')
    .transform((ids) => [...new Set(ids.map(lower))])
    .describe(`Ids of ${what} of this organization; the whole set. In form bodies: the key repeated, or a JSON array`)

/**
 * A repeatable any-of id filter (`?tags=a&tags=b`). Blank values mean no filter; values that are
 * not uuids match nothing and are no error: the filter becomes an empty list, which matches nothing.
 */
export const IdFilter = (what: string) =>
  z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((raw) => {
      const values = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map((v) => v.trim()).filter(Boolean)
      return values.length ? values.filter(isUuid).map(lower) : undefined
    })
    .describe(`Repeatable; matches ${what} (any of the ids)`)

/** A blank text field is no value. */
export const optionalText = (max = 255) => z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? null : v), z.string().trim().max(max).nullable()).optional()
export const optionalEmail = () => z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? null : typeof v === 'string' ? v.trim() : v), z.email('Enter a valid email address.').max(254).nullable()).optional()

export type Relations = { tags?: readonly string[]; assigned_to?: readonly string[]; contacts?: readonly string[]; teams?: readonly string[] }

// What a relation list may point at, and how its error names it.
const relationKinds = {
  tags: { live: liveTagIds, what: 'tags' },
  profiles: { live: activeProfileIds, what: 'active profiles' },
  contacts: { live: liveContactIds, what: 'contacts' },
  teams: { live: teamIds, what: 'teams' },
}

/**
 * The error of one relation list, or undefined: the ids it adds that are not live records of the
 * organization (another org's ids included). Ids the record already holds (`current`) may stay
 * after their tag is deleted or their profile deactivated, so a client can send back what it read.
 */
export async function relationErrors(db: Db, orgId: string, kind: keyof typeof relationKinds, requested: readonly string[] = [], current: readonly string[] = []): Promise<string[] | undefined> {
  const added = [...new Set(requested)].filter((id) => !current.includes(id))
  const live = await relationKinds[kind].live(db, orgId, added)
  const missing = added.filter((id) => !live.has(id))
  return missing.length ? [`Expected ${relationKinds[kind].what} of this organization; not: ${missing.join(', ')}`] : undefined
}

/** 400 naming every relation field (and any `extra` error of the module's own relations) with an id it may not point at. */
export async function checkRelations(db: Db, orgId: string, relations: Relations, extra: Record<string, string[]> = {}, current: Relations = {}): Promise<void> {
  const [tags, assigned, contacts, teams] = await Promise.all([
    relationErrors(db, orgId, 'tags', relations.tags, current.tags),
    relationErrors(db, orgId, 'profiles', relations.assigned_to, current.assigned_to),
    relationErrors(db, orgId, 'contacts', relations.contacts, current.contacts),
    relationErrors(db, orgId, 'teams', relations.teams, current.teams),
  ])
  const errors = { ...extra, ...(tags && { tags }), ...(assigned && { assigned_to: assigned }), ...(contacts && { contacts }), ...(teams && { teams }) }
  if (Object.keys(errors).length) throw new ValidationError(errors)
}

export const TagRef = z.object({ id: z.uuid(), name: z.string(), color: z.string().nullable() })
export const ProfileRef = z.object({ id: z.uuid(), email: z.string(), first_name: z.string(), last_name: z.string(), role: z.string(), is_active: z.boolean() })

export async function tagRefs(db: Db, orgId: string, ids?: readonly string[]): Promise<z.infer<typeof TagRef>[]> {
  return (await liveTags(db, orgId, ids)).map(({ id, name, color }) => ({ id, name, color }))
}

export type NameRef = { id: string; name: string }

/** Names of accounts or teams by id, keyed by id; a deleted account a record still points at keeps its name. */
export async function nameRefs(db: Db, table: 'accounts' | 'teams', orgId: string, ids: readonly string[]): Promise<Map<string, NameRef>> {
  if (!ids.length) return new Map()
  const rows = (await (db as unknown as Kysely<any>).selectFrom(table).select(['id', 'name']).where('org_id', '=', orgId).where('id', 'in', ids).execute()) as NameRef[]
  return new Map(rows.map((row) => [row.id, row]))
}

export async function profileRefs(db: Db, orgId: string, ids: readonly string[]): Promise<z.infer<typeof ProfileRef>[]> {
  return (await membersByIds(db, orgId, ids)).map(({ id, email, first_name, last_name, role, is_active }) => ({ id, email, first_name, last_name, role, is_active }))
}
