import { z } from 'zod'
import type { Db } from '../../db/database.ts'
import { membersByIds } from '../../identity/users.ts'
import { formList } from './schemas/form-values.ts'
import { liveTags } from '../../projections/tag/tags.ts'

/**
 * What the record routes (accounts, contacts, deals, leads) share about the ids a record points
 * at: body and filter schemas and the nested shapes a detail answers with. The existence checks
 * made before a command are projections/record/relations.ts.
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

export const TagRef = z.object({ id: z.uuid(), name: z.string(), color: z.string().nullable() })
/** The original's nested user of a profile: the web app reads a record's owner from `assigned_to[0].user_details.email`. */
const UserDetails = z.object({ id: z.uuid(), email: z.string(), first_name: z.string(), last_name: z.string(), profile_pic: z.string() })
export const ProfileRef = z.object({ id: z.uuid(), email: z.string(), first_name: z.string(), last_name: z.string(), role: z.string(), is_active: z.boolean(), user_details: UserDetails })

/**
 * A person's mark that they were erased (issue 31, docs/personal-data.md): `erased: true` on their
 * own record and beside their id in every record that points at them; absent otherwise. Their
 * personal fields stay keys with blank strings, which both apps' casts accept.
 */
export const Erased = z.literal(true).optional().describe('Present, true, once the person was erased (GDPR): their personal fields are then blank strings. Absent otherwise')
export const erasedMark = (row: { is_erased: boolean }): { erased?: true } => (row.is_erased ? { erased: true } : {})

/**
 * The same mark where a record names a person by a plain id and a name string rather than by a
 * nested ref (an invoice list's `contact` and `contact_name`, an activity's `entity_id` and
 * `entity_name`): `<key>: true` beside them once the person was erased, absent otherwise. The name
 * stays a string (blank once erased), which the apps cast.
 */
export const ContactErased = Erased.describe('Present, true, once the contact was erased (GDPR): `contact_name` is then blank. Absent otherwise')
export const EntityErased = Erased.describe('Present, true, when the record is a person who was erased (GDPR): `entity_name` is then blank. Absent otherwise')
export const erasedMarkAs = <K extends string>(key: K, isErased: boolean | null | undefined): Partial<Record<K, true>> => (isErased ? ({ [key]: true } as Record<K, true>) : {})

const personRef = { id: z.uuid(), first_name: z.string(), last_name: z.string().nullable() }
/** A contact a deal or a lead points at (and the deal form's picker), its email under the original's deal serializer's name. */
export const ContactRef = z.object({ ...personRef, email: z.string().nullable(), erased: Erased })
/** A contact a task or a case points at (and their forms' pickers), with the original's `primary_email`. */
export const PrimaryEmailContactRef = z.object({ ...personRef, primary_email: z.string().nullable(), erased: Erased })

/** What a contact ref is made of: a contacts read-model row's columns, by shape (the HTTP kernel names no module's read model). */
type ContactRefRow = { id: string; first_name: string; last_name: string | null; email: string | null; is_erased: boolean }

export const contactRef = ({ id, first_name, last_name, email, is_erased }: ContactRefRow): z.infer<typeof ContactRef> => ({ id, first_name, last_name, email, ...erasedMark({ is_erased }) })
export const primaryEmailContactRef = (row: ContactRefRow): z.infer<typeof PrimaryEmailContactRef> => {
  const { email, ...ref } = contactRef(row)
  return { ...ref, primary_email: email }
}

export async function tagRefs(db: Db, orgId: string, ids?: readonly string[]): Promise<z.infer<typeof TagRef>[]> {
  return (await liveTags(db, orgId, ids)).map(({ id, name, color }) => ({ id, name, color }))
}

export type NameRef = { id: string; name: string }

/** Names of accounts or teams by id, keyed by id; a deleted account a record still points at keeps its name. */
export async function nameRefs(db: Db, table: 'accounts' | 'teams', orgId: string, ids: readonly string[]): Promise<Map<string, NameRef>> {
  if (!ids.length) return new Map()
  const rows = (await db.selectFrom(table).select(['id', 'name']).where('org_id', '=', orgId).where('id', 'in', ids).execute()) as NameRef[]
  return new Map(rows.map((row) => [row.id, row]))
}

type Member = { id: string; user_id: string; email: string; first_name: string; last_name: string; role: string; is_active: boolean }

export const profileRefOf = ({ id, user_id, email, first_name, last_name, role, is_active }: Member): z.infer<typeof ProfileRef> => ({
  id,
  email,
  first_name,
  last_name,
  role,
  is_active,
  user_details: { id: user_id, email, first_name, last_name, profile_pic: '' },
})

export async function profileRefs(db: Db, orgId: string, ids: readonly string[]): Promise<z.infer<typeof ProfileRef>[]> {
  return (await membersByIds(db, orgId, ids)).map(profileRefOf)
}
