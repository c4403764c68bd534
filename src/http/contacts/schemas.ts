import { z } from 'zod'
import type { Db } from '../../db/database.ts'
import { accountNamesOf } from '../../projections/account/accounts.ts'
import type { ContactRow } from '../../projections/contact/contacts.ts'
import { Contact, RecordRefs, contactBody, recordRefs } from '../kernel/schemas/records.ts'
import { countryDisplay } from '../accounts/choices.ts'

/** A contact as the contact routes (and the account detail) answer it: today's fields, its assignees and tags as objects, and the original's fields. */
const text = z.string().nullable()
const AccountLink = z.object({ id: z.uuid(), name: z.string() })

export const ContactRecord = Contact.extend({
  ...RecordRefs,
  organization: text.describe('The company as typed: free text, not the account link'),
  department: text,
  linkedin_url: text,
  address_line: text,
  city: text,
  state: text,
  postcode: text,
  country: text,
  country_display: text,
  do_not_call: z.boolean(),
  is_active: z.boolean(),
  account_detail: AccountLink.nullable().describe('`account` with its name, when it is a live account'),
  linked_accounts: z.array(AccountLink).describe("The accounts the contact belongs to: its account's, when it has one"),
})
export type ContactRecordBody = z.infer<typeof ContactRecord>

/** Contacts as response bodies, their accounts' names, assignees and tags looked up once for the whole batch. */
export async function contactRecords(db: Db, orgId: string, rows: readonly ContactRow[]): Promise<ContactRecordBody[]> {
  const accountIds = [...new Set(rows.flatMap((row) => (row.account ? [row.account] : [])))]
  const [names, refsOf] = await Promise.all([accountNamesOf(db, orgId, accountIds), recordRefs(db, orgId, rows)])
  const accounts = new Map(names.map((account) => [account.id, account]))
  return rows.map((row) => {
    const account = row.account ? (accounts.get(row.account) ?? null) : null
    return { ...contactBody(row), ...refsOf(row), country_display: countryDisplay(row.country), account_detail: account, linked_accounts: account ? [account] : [] }
  })
}
