import { accountDecider, accountNames, accountStream } from '../account/account.ts'
import { companion } from '../handle-command.ts'
import type { Companion } from '../handle-command.ts'
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
 * A tag merge's retagging (issue 4), as companion commands of the merge: every live account,
 * contact, deal and lead of the organization tagged `from` gets one update event carrying `into`
 * instead, in the same append as TagMerged (one transaction on PostgreSQL), so a merge is done
 * whole or not at all. Each is decided on its stream as stored, so a record retagged or deleted
 * since the read models were read decides nothing.
 */
export async function retagsOf(db: Db, retag: Retag): Promise<Companion[]> {
  const [accounts, contacts, deals, leads] = await Promise.all([accountsTagged(db, retag.orgId, retag.from), contactsTagged(db, retag.orgId, retag.from), opportunitiesTagged(db, retag.orgId, retag.from), leadsTagged(db, retag.orgId, retag.from)])
  return [
    ...accounts.map(({ id }) => companion(retagAccount, accountStream(id), retag)),
    ...contacts.map(({ id }) => companion(retagContact, contactStream(id), retag)),
    ...deals.map(({ id }) => companion(retagOpportunity, opportunityStreams.stream(id), retag)),
    ...leads.map(({ id }) => companion(retagLead, leadStreams.stream(id), retag)),
  ]
}
