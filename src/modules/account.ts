import { sql } from 'kysely'
import { z } from 'zod'
import { accountStreams } from '../commands/account/account.ts'
import type { AccountEvent } from '../commands/account/account.ts'
import { By, Decimal, Id, Ids, at, eventsOf, noteDefinitions, texts, noPersonalData } from '../events/event-schemas.ts'
import { accountsProjector } from '../projections/account/accounts.ts'
import { email, firstOf, str, words } from '../projections/search/search-documents.ts'
import { created, deleted, noteReadings, updatedFlat } from '../projections/record/record-kinds.ts'
import type { ModuleManifest } from './manifest.ts'

// Accounts (account-<id>): commands/record.ts events.
const accountShape = {
  name: z.string(),
  ...texts('email', 'phone', 'website', 'industry', 'address_line', 'city', 'state', 'postcode', 'country', 'description'),
  // v2 (issue 22): the original's business fields.
  number_of_employees: z.number().int().min(0).nullable(),
  annual_revenue: Decimal.nullable(),
  currency: z.string().nullable(),
  is_active: z.boolean(),
  assigned_to: Ids,
  tags: Ids,
}

/** Accounts: customer organizations, their comments and attachments, and mail sent from them. */
export const accountModule: ModuleManifest = {
  name: 'account',
  events: noPersonalData(eventsOf<AccountEvent>()({
    // account-<id>
    AccountCreated: { stream: 'account', description: 'An account (customer organization) was created (v2: with employees, annual revenue and currency).', data: z.strictObject({ account_id: Id, org_id: Id, ...accountShape, created_by: By, ...at }) },
    AccountUpdated: { stream: 'account', description: 'Fields of an account changed: the new values of those only.', data: z.strictObject({ ...z.object(accountShape).partial().shape, ...at }) },
    AccountDeleted: { stream: 'account', description: 'An account was (soft) deleted.', data: z.strictObject(at) },
    ...noteDefinitions('Account', 'account', 'account'),
    AccountEmailSent: {
      stream: 'account',
      description: 'Mail was sent from an account to some of its organization\'s contacts (their ids, not their addresses) and handed to the mailer.',
      data: z.strictObject({ email_id: Id, subject: z.string(), body: z.string(), recipients: Ids, by: By, ...at }),
    },
  })),
  routes: async (deps, files) => {
    const [{ accountNoteRoutes, accountRoutes }, { accountMailRoutes }] = await Promise.all([import('../http/accounts/accounts.ts'), import('../http/accounts/account-mail.ts')])
    return [accountRoutes(deps), accountNoteRoutes(deps, files), accountMailRoutes(deps)]
  },
  projectors: [accountsProjector],
  search: {
    kind: 'account',
    order: 3,
    version: 0,
    streams: accountStreams,
    events: { created: 'AccountCreated', updated: 'AccountUpdated', deleted: 'AccountDeleted' },
    changes: 'flat',
    keys: ['name', 'email', 'website', 'industry'],
    visibility: 'Account',
    document: (f) => ({ title: str(f.name), subtitle: firstOf(f.email, f.industry), names: str(f.name), terms: words(email(f.email), f.website, f.industry) }),
  },
  record: {
    entityType: 'Account',
    version: 0,
    table: 'accounts',
    name: sql<string>`r.name`,
    page: '/accounts',
    noun: 'account',
    activity: {
      AccountCreated: created,
      AccountUpdated: updatedFlat,
      AccountDeleted: deleted,
      AccountEmailSent: { action: 'UPDATE', describe: () => 'Sent an email to the account' },
      ...noteReadings('Account'),
    },
    notifiedBy: { created: 'AccountCreated', updated: 'AccountUpdated', commented: 'AccountCommentAdded' },
  },
  idKinds: [
    [/^\/api\/accounts\/comment\/\{id\}/, 'accountComment'],
    [/^\/api\/accounts\/attachment\/\{id\}/, 'accountAttachment'],
    [/^\/api\/accounts\/\{id\}/, 'account'],
  ],
}
