import { z } from 'zod'
import { ValidationError } from '../../errors.ts'
import { accountOf } from '../../projections/account/accounts.ts'
import { contactOf } from '../../projections/contact/contacts.ts'
import { leadOf } from '../../projections/lead/leads.ts'
import { opportunityOf } from '../../projections/opportunity/opportunities.ts'
import { liveTags } from '../../projections/tag/tags.ts'
import { taskOf } from '../../projections/task/tasks.ts'
import { ACCOUNT_NAME_SCOPE, accountDecider, accountNames, accountStream, emptyAccount } from '../account/account.ts'
import type { AccountFields } from '../account/account.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import type { CommandSession } from '../command-session.ts'
import { CONTACT_EMAIL_SCOPE, contactDecider, contactNames, contactStream, emptyContact } from '../contact/contact.ts'
import type { ContactFields } from '../contact/contact.ts'
import { LEAD_EMAIL_SCOPE, createLead } from '../lead/create-lead.ts'
import { leadDecider, leadStreams } from '../lead/lead.ts'
import { DEAL_NAME_SCOPE, createDeal } from '../opportunity/create-opportunity.ts'
import type { DealDeps } from '../opportunity/create-opportunity.ts'
import { opportunityDecider, opportunityStreams } from '../opportunity/opportunity.ts'
import { createRecord } from '../record-create.ts'
import { createTag } from '../tag/create-tag.ts'
import type { RecordModule } from '../record-create.ts'
import type { RecordNames } from '../record.ts'
import { taskStream } from '../task/task.ts'
import { createTask, deleteTask } from '../task/write-task.ts'
import { withReleasedName } from '../unique-name.ts'
import type { SampleAccount, SampleContact, SampleDeal, SampleLead, SampleTask } from './catalogue.ts'
import type { SampleKind } from './sample-data.ts'

/**
 * How a pack's items become records, and sample records go away again: through each module's own
 * use cases and commands (the same rules, events and history as a user's records), under the
 * applying admin's session. Ids are given, so a retried apply finds its records already there.
 */

// Accounts and contacts are plain records: their create is the shared createRecord with the module's decider.
const plain = <F extends Record<U, string | null>, U extends keyof F & string, N extends RecordNames>(module: Omit<RecordModule<F, U, N>, 'body' | 'checkRelations'>): RecordModule<F, U, N> => ({
  ...module,
  body: z.custom<Partial<F>>(),
  // The pack's own references only: the accounts it names are the ones it just created.
  checkRelations: async () => {},
})
const ACCOUNTS = plain<AccountFields, 'name', typeof accountNames>({ plural: 'accounts', empty: emptyAccount, decider: accountDecider, commands: accountNames.commands, stream: accountStream, unique: { scope: ACCOUNT_NAME_SCOPE, field: 'name' } })
const CONTACTS = plain<ContactFields, 'email', typeof contactNames>({ plural: 'contacts', empty: emptyContact, decider: contactDecider, commands: contactNames.commands, stream: contactStream, unique: { scope: CONTACT_EMAIL_SCOPE, field: 'email' } })

/** The ids of the pack's records so far, by kind and item key: what later items point at. */
export type Created = Record<'account' | 'deal' | 'lead', Map<string, string>>

export type Creation = { kind: SampleKind; name: string; stream: (id: string) => string; create: (id: string) => Promise<unknown> }

/** Each kind's creation of a pack item under `id`, in the order later items need them; each record carries `tags` (the sample-data tag). */
export function creations(deps: DealDeps, caller: Caller, session: CommandSession, created: Created, tags: string[]) {
  const ref = (kind: keyof Created, key: string | undefined) => (key === undefined ? null : (created[kind].get(key) ?? null))
  return {
    account: (item: SampleAccount): Creation => ({
      kind: 'account', name: item.name, stream: accountStream,
      create: (id) => createRecord(deps, caller, ACCOUNTS, { name: item.name, industry: item.industry, city: item.city, country: item.country, website: item.website, description: item.description, tags }, { id, session }),
    }),
    contact: (item: SampleContact): Creation => ({
      kind: 'contact', name: `${item.first_name} ${item.last_name}`, stream: contactStream,
      create: (id) => createRecord(deps, caller, CONTACTS, { first_name: item.first_name, last_name: item.last_name, email: item.email, title: item.title, account: ref('account', item.account), tags }, { id, session }),
    }),
    deal: (item: SampleDeal): Creation => ({
      kind: 'deal', name: item.name, stream: opportunityStreams.stream,
      create: (id) => createDeal(deps, caller, { id, input: { name: item.name, account: ref('account', item.account), amount: item.amount, probability: item.probability, closed_on: item.closed_on, description: item.description, tags } }, session),
    }),
    lead: (item: SampleLead): Creation => ({
      kind: 'lead', name: `${item.first_name} ${item.last_name}`, stream: leadStreams.stream,
      create: (id) => createLead(deps, caller, { first_name: item.first_name, last_name: item.last_name, email: item.email, company_name: item.company_name, source: item.source, description: item.description, tags }, { id, session }),
    }),
    task: (item: SampleTask): Creation => {
      const parent = 'account' in item.parent ? { account: ref('account', item.parent.account) } : 'deal' in item.parent ? { opportunity: ref('deal', item.parent.deal) } : { lead: ref('lead', item.parent.lead) }
      return {
        kind: 'task', name: item.title, stream: taskStream,
        create: (id) => createTask(deps, caller, { title: item.title, status: 'New', priority: item.priority, due_date: item.due_date, ...parent, tags }, session, id),
      }
    },
  }
}

/** The name of the tag sample records carry, so users can tell and filter them (the original's); what a clear deletes is never decided by it. */
export const SAMPLE_TAG = 'Sample data'

/**
 * The organization's active sample-data tag, created when missing. Best effort: when a concurrent
 * apply takes the name first, its records carry no tag from this one (both create the same records).
 */
export async function sampleTag(deps: DealDeps, caller: Caller, session: CommandSession): Promise<string[]> {
  const existing = (await liveTags(deps.db, caller.orgId)).find((tag) => tag.name.toLowerCase() === SAMPLE_TAG.toLowerCase())
  if (existing) return [existing.id]
  try {
    return [(await createTag(deps, caller, { name: SAMPLE_TAG, color: 'gray', description: 'Records a sample-data pack created' }, session)).tagId]
  } catch (error) {
    if (error instanceof ValidationError) return []
    throw error
  }
}

/**
 * Deletes a sample record as its module's DELETE does (its unique name freed in the same append).
 * Answers whether it was live: one a user already deleted is left as it is.
 */
export async function deleteSample(deps: DealDeps, caller: Caller, session: CommandSession, kind: SampleKind, id: string): Promise<boolean> {
  const { db } = deps
  const orgId = caller.orgId
  const actor = actorOfCaller(caller)
  const at = deps.clock().toISOString()
  const release = (scope: string, name: string | null, remove: Parameters<typeof withReleasedName>[2]) => (name === null ? remove(session.run) : withReleasedName(session.run, { scope, orgId, ownerId: id, name }, remove))
  switch (kind) {
    case 'task':
      if (!(await taskOf(db, orgId, id))) return false
      await deleteTask(deps, caller, id, session)
      return true
    case 'lead': {
      const row = await leadOf(db, orgId, id)
      if (!row) return false
      await release(LEAD_EMAIL_SCOPE, row.email, (run) => run(leadDecider, leadStreams.stream(id), { type: 'DeleteLead', orgId, actor, at }))
      return true
    }
    case 'deal': {
      const row = await opportunityOf(db, orgId, id)
      if (!row) return false
      await release(DEAL_NAME_SCOPE, row.name, (run) => run(opportunityDecider, opportunityStreams.stream(id), { type: 'DeleteOpportunity', orgId, actor, at }))
      return true
    }
    case 'contact': {
      const row = await contactOf(db, orgId, id)
      if (!row) return false
      await release(CONTACT_EMAIL_SCOPE, row.email, (run) => run(contactDecider, contactStream(id), { type: contactNames.commands.delete, orgId, actor, at }))
      return true
    }
    case 'account': {
      const row = await accountOf(db, orgId, id)
      if (!row) return false
      await release(ACCOUNT_NAME_SCOPE, row.name, (run) => run(accountDecider, accountStream(id), { type: accountNames.commands.delete, orgId, actor, at }))
      return true
    }
  }
}
