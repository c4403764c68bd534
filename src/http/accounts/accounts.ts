import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { TaskLink, taskLinks } from '../tasks/task-views.ts'
import { InvoiceListItem, invoiceListItem } from '../invoices/views.ts'
import { invoiceConditions, listInvoices } from '../../projections/invoice/queries.ts'
import { todayOf } from '../../commands/invoice/write-invoice.ts'
import type { Viewer } from '../../visibility/policy.ts'
import { ACCOUNT_NAME_SCOPE, accountDecider, accountNames, accountStream, emptyAccount } from '../../commands/account/account.ts'
import { orNotFound } from '../../errors.ts'
import type { FileStore } from '../../files/file-store.ts'
import { ACCOUNT_NOTES, accountOf, dealsOf, listAccounts } from '../../projections/account/accounts.ts'
import { contactPicker, contactsOfAccount } from '../../projections/contact/contacts.ts'
import type { Deps } from '../../deps.ts'
import { NoteLists, memberNoteRoutes } from '../kernel/note-routes.ts'
import { notesView } from '../kernel/note-views.ts'
import { viewerOf } from '../kernel/auth.ts'
import { recordWriteRoutes } from '../kernel/record-routes.ts'
import { Erased, IdFilter, ProfileRef, TagRef, erasedMark, optionalEmail, optionalText, tagRefs } from '../kernel/relations.ts'
import { checkRelations } from '../../projections/record/relations.ts'
import { IdParams, PageQuery, authErrors, nextOffset, pageOf } from '../kernel/schemas/common.ts'
import { ContactRecord, contactRecords } from '../contacts/schemas.ts'
import { countryChoices, industryChoices } from './choices.ts'
import { AccountRecord, AnnualRevenue, Choices, CurrencyCode, DealSummary, Employees, RelationList, TeamChoice, UserChoice, accountRecords, dealSummary, teamChoices, userChoices } from './schemas.ts'
import type { AccountRecordBody } from './schemas.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'

const AccountFields = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(255).describe('Unique per organization, case-insensitively'),
  email: optionalEmail(),
  phone: optionalText(50),
  website: optionalText(),
  industry: optionalText().describe('Free text; the list answer offers the original\'s `industries`'),
  number_of_employees: Employees,
  annual_revenue: AnnualRevenue,
  currency: CurrencyCode,
  address_line: optionalText(),
  city: optionalText(),
  state: optionalText(),
  postcode: optionalText(64),
  country: optionalText().describe('Free text; the list answer offers the `countries` codes (then `country_display` names it)'),
  description: optionalText(10_000),
  is_active: formBoolean(z.boolean()).optional().describe('Default true; inactive accounts are listed under `closed_accounts`'),
  assigned_to: RelationList('active profiles').optional(),
  tags: RelationList('live tags').optional(),
  // The original's account form fields this API does not keep on the account; its phone app sends them back as it read them.
  contacts: z.array(z.unknown()).optional().describe("Accepted and ignored: a contact's account is set on the contact (PUT /api/contacts/{id}/ `account`)"),
  custom_fields: z.record(z.string(), z.unknown()).optional().describe('Accepted and ignored: accounts keep no custom field values yet'),
})
const withoutIgnored = <B extends { contacts?: unknown; custom_fields?: unknown }>({ contacts: _contacts, custom_fields: _customFields, ...fields }: B) => fields
const AccountBody = AccountFields.transform(withoutIgnored)
const AccountPatch = AccountFields.partial().transform(withoutIgnored)
const Text = z.string().optional()
const ListQuery = PageQuery.extend({
  name: Text.describe('Case-insensitive contains on the name'),
  search: Text.describe('Case-insensitive contains on name, email or city'),
  city: Text.describe('Case-insensitive contains'),
  industry: Text.describe('Case-insensitive contains'),
  tags: IdFilter('accounts carrying a tag'),
  assigned_to: IdFilter('accounts assigned to a profile'),
  created_at__gte: Text.describe('YYYY-MM-DD (UTC day); malformed matches nothing'),
  created_at__lte: Text.describe('YYYY-MM-DD, the whole day included'),
})
const Section = (records: string, count: string) =>
  z.object({ offset: z.number().int().nullable().describe('Where the next page starts; null after the last page, 0 when the page is empty'), [records]: z.array(AccountRecord), [count]: z.number().int() })
const AccountList = pageOf(AccountRecord)
  .extend({
    per_page: z.number().int(),
    page_number: z.number().int(),
    active_accounts: Section('open_accounts', 'open_accounts_count').describe('One page (limit, offset) of the active accounts, and how many match'),
    closed_accounts: Section('close_accounts', 'close_accounts_count').describe('One page (limit, offset) of the inactive accounts, and how many match'),
    contacts: z.array(z.object({ id: z.uuid(), first_name: z.string(), erased: Erased })).describe("The organization's contacts, for the account form"),
    teams: z.array(TeamChoice),
    users: z.array(UserChoice).describe('Active members'),
    tags: z.array(TagRef).describe("The organization's tags, for the filter picker"),
    countries: Choices.describe('`[code, name]` pairs'),
    industries: Choices.describe('`[value, label]` pairs'),
    status: z.array(z.string()),
  })
  .describe('`count` and `results` are one page of all the matching accounts (active or not), by name; the original\'s `active_accounts` / `closed_accounts` split it by is_active')
const AccountDetail = z.object({
  account_obj: AccountRecord.extend({
    contacts: z.array(ContactRecord),
    opportunities: z.array(DealSummary),
    cases: z.array(z.object({ id: z.uuid() })),
    tasks: z.array(TaskLink),
  }).describe('The account, with its contacts, deals, cases and tasks also inside it (where the original\'s phone app reads them)'),
  contacts: z.array(ContactRecord).describe("The account's contacts"),
  opportunities: z.array(DealSummary).describe("The account's deals the caller may see, newest first"),
  opportunity_list: z.array(DealSummary).describe('The same deals, under the original\'s name'),
  cases: z.array(z.object({ id: z.uuid() })).describe('Always empty until cases exist'),
  invoices: z.array(InvoiceListItem).describe("The account's newest invoices the caller may see (at most 20)"),
  tasks: z.array(TaskLink).describe('The newest tasks linked to this account that the caller may open (at most 20)'),
  tags: z.array(TagRef),
  assigned_to: z.array(ProfileRef),
  users: z.array(UserChoice),
  teams: z.array(TeamChoice),
  countries: Choices,
  comment_permission: z.boolean().describe('Whether the caller may comment: every member may'),
  ...NoteLists,
})

/**
 * Accounts (issue 4): any member of the organization reads, creates and edits them; deleting
 * (soft, frees the name) is for an admin or the creator. Names are unique per organization,
 * case-insensitively, also under concurrency (name claims).
 */
export function accountRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  return async (app) => {
    const found = (orgId: string, id: string) => orNotFound(accountOf(db, orgId, id))

    app.get('/api/accounts/', { schema: { tags: ['accounts'], summary: 'Accounts of the organization, by name: active and inactive apart, with the form pickers', querystring: ListQuery, response: { 200: AccountList, ...authErrors } } }, async (request) => {
      const viewer = viewerOf(request)
      const { orgId } = viewer
      const { limit, offset, name, search, city, industry, tags, assigned_to, created_at__gte, created_at__lte } = request.query
      const filter = { limit, offset, name, search, city, industry, tags, assignedTo: assigned_to, createdFrom: created_at__gte, createdTo: created_at__lte }
      const [all, active, inactive, orgTags, contacts, users, teams] = await Promise.all([
        listAccounts(db, orgId, filter),
        listAccounts(db, orgId, { ...filter, isActive: true }),
        listAccounts(db, orgId, { ...filter, isActive: false }),
        tagRefs(db, orgId),
        contactPicker(db, orgId).then((rows) => rows.map(({ id, first_name, is_erased }) => ({ id, first_name, ...erasedMark({ is_erased }) }))),
        userChoices(db, orgId),
        teamChoices(db, orgId),
      ])
      // The three pages often share rows: their bodies (rollups, assignees, tags) are made in one batch.
      const bodies = new Map((await accountRecords(db, viewer, [...new Map([all, active, inactive].flatMap(({ rows }) => rows.map((row) => [row.id, row] as const))).values()])).map((body) => [body.id, body]))
      const [results, open, closed] = [all, active, inactive].map(({ rows }) => rows.map((row) => bodies.get(row.id)!))
      return {
        count: all.count,
        offset,
        limit,
        results: results!,
        per_page: limit,
        page_number: limit ? Math.floor(offset / limit) + 1 : 1,
        active_accounts: { offset: nextOffset(offset, open!.length, active.count), open_accounts: open!, open_accounts_count: active.count },
        closed_accounts: { offset: nextOffset(offset, closed!.length, inactive.count), close_accounts: closed!, close_accounts_count: inactive.count },
        contacts,
        teams,
        users,
        tags: orgTags,
        countries: countryChoices(),
        industries: industryChoices(),
        status: ['active', 'inactive'],
      }
    })

    app.get('/api/accounts/:id/', { schema: { tags: ['accounts'], summary: 'One account with its contacts, deals, tags and assignees', params: IdParams, response: { 200: AccountDetail, ...authErrors } } }, async (request) => {
      const viewer = viewerOf(request)
      const { orgId } = viewer
      const account = await found(orgId, request.params.id)
      const now = deps.clock()
      const [[record], contacts, deals, notes, users, teams] = await Promise.all([
        accountRecords(db, viewer, [account]),
        contactsOfAccount(db, orgId, account.id).then((rows) => contactRecords(db, orgId, rows)),
        dealsOf(db, viewer, { account: account.id }),
        notesView(db, orgId, ACCOUNT_NOTES, 'accounts', account.id),
        userChoices(db, orgId),
        teamChoices(db, orgId),
      ])
      const opportunities = deals.map((deal) => dealSummary(deal, now))
      const tasks = await taskLinks(db, viewer, { account: account.id })
      const today = todayOf(now)
      const invoices = await listInvoices(db, viewer, invoiceConditions(viewer, { account: [account.id] }, today), { limit: 20, offset: 0, sort: '-created_at', today })
      return {
        account_obj: { ...record!, contacts, opportunities, cases: [], tasks },
        contacts,
        opportunities,
        opportunity_list: opportunities,
        cases: [],
        invoices: invoices.rows.map(invoiceListItem),
        tasks,
        tags: record!.tags,
        assigned_to: record!.assigned_to,
        users,
        teams,
        countries: countryChoices(),
        comment_permission: true,
        ...notes,
      }
    })

    recordWriteRoutes(app, deps, {
      plural: 'accounts',
      noun: { title: 'Account', indefinite: 'an account' },
      body: AccountBody,
      patch: AccountPatch,
      empty: emptyAccount,
      decider: accountDecider,
      commands: accountNames.commands,
      stream: accountStream,
      found,
      checkRelations: (orgId, requested, current) => checkRelations(db, orgId, requested, {}, current),
      unique: { scope: ACCOUNT_NAME_SCOPE, field: 'name' },
    })
  }
}

/** A live account as the account routes answer it (`account_obj`), or undefined. */
async function accountBody(db: Deps['db'], viewer: Viewer, id: string): Promise<AccountRecordBody | undefined> {
  const row = await accountOf(db, viewer.orgId, id)
  return row && (await accountRecords(db, viewer, [row]))[0]
}

/** An account's comments and attachments (note-routes.ts), the file in `account_attachment`; events on the account's stream. The answer's `account_obj` is the detail's. */
export const accountNoteRoutes = (deps: Deps, files: FileStore) =>
  memberNoteRoutes<AccountRecordBody>(deps, files, { singular: 'account', tables: ACCOUNT_NOTES, schema: AccountRecord, bodyOf: (body) => body, rowOf: (viewer, id) => accountBody(deps.db, viewer, id) }, (commands, id, command) =>
    commands.run(accountDecider, accountStream(id), command),
  )
