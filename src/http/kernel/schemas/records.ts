import { z } from 'zod'
import type { AccountRow } from '../../../projections/accounts.ts'
import type { ContactRow } from '../../../projections/contacts.ts'

/** Response shapes of the record modules (accounts, contacts), shared where one nests the other. */
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
})

/** A read-model row as its response body: timestamps as ISO strings (the schema drops internal columns). */
export const recordBody = <Row extends AccountRow | ContactRow>(row: Row) => ({ ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() })

/** Mutations with the error flag (§4.1): create also answers the new record's id. */
export const Created = z.object({ error: z.literal(false), message: z.string(), id: z.uuid() })
