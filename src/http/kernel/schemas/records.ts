import { z } from 'zod'
import type { AccountRow } from '../../../projections/account/accounts.ts'
import type { ContactRow } from '../../../projections/contact/contacts.ts'
import type { Db } from '../../../db/database.ts'
import { Erased, ProfileRef, TagRef, erasedMark, profileRefs, tagRefs } from '../relations.ts'

/**
 * Response shapes of the record modules (accounts, contacts), shared where one nests the other.
 * `Account` and `Contact` carry their relations as ids (the deal form's pickers list them so);
 * the account and contact routes answer them with `RecordRefs` instead, as the original does.
 */
const stamps = { created_by: z.uuid().nullable(), created_at: z.string(), updated_at: z.string() }
const text = z.string().nullable()

export const Account = z.object({
  id: z.uuid(),
  name: z.string(),
  email: text,
  phone: text,
  website: text,
  industry: text,
  address_line: text,
  city: text,
  state: text,
  postcode: text,
  country: text,
  description: text,
  is_active: z.boolean(),
  assigned_to: z.array(z.uuid()).describe('Profile ids'),
  tags: z.array(z.uuid()).describe('Tag ids'),
  ...stamps,
})

export const Contact = z.object({
  id: z.uuid(),
  first_name: z.string(),
  last_name: text,
  email: text,
  phone: text,
  title: text,
  account: z.uuid().nullable().describe('Account id'),
  description: text,
  assigned_to: z.array(z.uuid()).describe('Profile ids'),
  tags: z.array(z.uuid()).describe('Tag ids'),
  ...stamps,
  erased: Erased,
})

/** An account's or contact's relations as objects, as the original answers them and its web app reads them (`assigned_to[0].user_details.email`, `tags[].name`). */
export const RecordRefs = {
  assigned_to: z.array(ProfileRef).describe('The assigned profiles, by email'),
  tags: z.array(TagRef).describe('The live tags, by name'),
}
type Refs = { assigned_to: z.infer<typeof ProfileRef>[]; tags: z.infer<typeof TagRef>[] }

/**
 * The profiles and tags a batch of rows points at, fetched in one query each for the whole batch
 * (never per row): answers a row's `assigned_to` and `tags` as objects, in the row's order (the
 * order they were given in). A deleted tag is left out.
 */
export async function recordRefs(db: Db, orgId: string, rows: readonly { assigned_to: readonly string[]; tags: readonly string[] }[]): Promise<(row: { assigned_to: readonly string[]; tags: readonly string[] }) => Refs> {
  const unique = (ids: string[]) => [...new Set(ids)]
  const [profiles, tags] = await Promise.all([profileRefs(db, orgId, unique(rows.flatMap((row) => row.assigned_to))), tagRefs(db, orgId, unique(rows.flatMap((row) => row.tags)))])
  const byId = <T extends { id: string }>(refs: T[]) => new Map(refs.map((ref) => [ref.id, ref]))
  const pick = <T>(refs: Map<string, T>, ids: readonly string[]) => ids.flatMap((id) => refs.get(id) ?? [])
  const [profileById, tagById] = [byId(profiles), byId(tags)]
  return (row) => ({ assigned_to: pick(profileById, row.assigned_to), tags: pick(tagById, row.tags) })
}

/** A read-model row as its response body: timestamps as ISO strings (the schema drops internal columns). */
export const recordBody = <Row extends AccountRow | ContactRow>(row: Row) => ({ ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() })
/** A contact's row as its response body, marked `erased` once the person was (issue 31). */
export const contactBody = (row: ContactRow) => ({ ...recordBody(row), ...erasedMark(row) })

/** Mutations with the error flag (§4.1): create also answers the new record's id. */
export const Created = z.object({ error: z.literal(false), message: z.string(), id: z.uuid() })
