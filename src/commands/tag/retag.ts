import { accountDecider, accountNames, accountStream } from '../account/account.ts'
import type { CommandRunner } from '../command-runner.ts'
import { contactDecider, contactNames, contactStream } from '../contact/contact.ts'
import type { Decider } from '../decider.ts'
import { leadDecider, leadStreams } from '../lead/lead.ts'
import type { LeadEvent, LeadState } from '../lead/lead.ts'
import { opportunityDecider, opportunityStreams } from '../opportunity/opportunity.ts'
import { retagged } from '../record.ts'
import type { RecordDecider, RecordEvent, RecordNames, RecordState } from '../record.ts'
import type { Db } from '../../db/database.ts'
import { accountsTagged } from '../../projections/accounts.ts'
import { contactsTagged } from '../../projections/contacts.ts'
import { leadsTagged } from '../../projections/leads.ts'
import { opportunitiesTagged } from '../../projections/opportunities.ts'

export type Retag = { orgId: string; from: string; into: string; at: string }


/**
 * A record's ordinary update command, with the tag list computed from the stream's own state
 * rather than from the read model that found the record: a tag edit made meanwhile is kept, a
 * retry after a conflict recomputes it, and a record deleted meanwhile is left alone.
 */
function retagDecider<Fields extends { tags: string[] }, N extends RecordNames>(decider: RecordDecider<Fields, N>, update: N['commands']['update']): Decider<Retag, RecordState<Fields>, RecordEvent<Fields, N>> {
  return {
    initialState: decider.initialState,
    evolve: decider.evolve,
    decide: (retag, state) => {
      if (state.deleted) return []
      const changes = { tags: retagged(state.fields.tags, retag) } as Partial<Fields>
      return decider.decide({ type: update, orgId: retag.orgId, changes, at: retag.at }, state)
    },
  }
}

export const retagAccount = retagDecider(accountDecider, accountNames.commands.update)
export const retagContact = retagDecider(contactDecider, contactNames.commands.update)
const retagLead: Decider<Retag, LeadState, LeadEvent> = {
  ...leadDecider,
  // A merge is an admin's act: the update runs with admin rights, touching only the tags.
  decide: (retag, state) =>
    state.exists && !state.deleted
      ? leadDecider.decide({ type: 'UpdateLead', orgId: retag.orgId, actor: { profileId: null, isAdmin: true, isSuperuser: false }, at: retag.at, customFields: [], input: { tags: retagged(state.fields.tags, retag) }, replace: false }, state)
      : [],
}
const retagOpportunity: Decider<Retag, ReturnType<typeof opportunityDecider.initialState>, ReturnType<typeof opportunityDecider.decide>[number]> = {
  ...opportunityDecider,
  decide: (retag, state) => opportunityDecider.decide({ type: 'RetagOpportunity', ...retag }, state),
}

/**
 * A tag merge's first half (issue 4): every live account, contact, deal and lead of the organization tagged
 * `from` gets one update event carrying `into` instead. The merge records TagMerged only after
 * this, so a merge that fails half-way can be repeated and finds the records left.
 */
export async function retagRecords(db: Db, run: CommandRunner, retag: Retag): Promise<void> {
  for (const { id } of await accountsTagged(db, retag.orgId, retag.from)) await run(retagAccount, accountStream(id), retag)
  for (const { id } of await contactsTagged(db, retag.orgId, retag.from)) await run(retagContact, contactStream(id), retag)
  for (const { id } of await opportunitiesTagged(db, retag.orgId, retag.from)) await run(retagOpportunity, opportunityStreams.stream(id), retag)
  for (const { id } of await leadsTagged(db, retag.orgId, retag.from)) await run(retagLead, leadStreams.stream(id), retag)
}
