import { accountDecider, accountNames, accountStream } from '../account/account.ts'
import { caseDecider, caseStream } from '../case/case.ts'
import { companion } from '../handle-command.ts'
import type { Companion } from '../handle-command.ts'
import { contactDecider, contactNames, contactStream } from '../contact/contact.ts'
import type { Actor } from '../caller.ts'
import type { Decider, DomainEvent } from '../decider.ts'
import { leadDecider, leadStreams } from '../lead/lead.ts'
import { opportunityDecider, opportunityStreams } from '../opportunity/opportunity.ts'
import { retagged } from '../record.ts'
import { taskDecider, taskStream } from '../task/task.ts'
import type { RecordDecider, RecordEvent, RecordNames, RecordState } from '../record.ts'
import type { Db } from '../../db/database.ts'
import { accountsTagged } from '../../projections/account/accounts.ts'
import { casesTagged } from '../../projections/case/queries.ts'
import { contactsTagged } from '../../projections/contact/contacts.ts'
import { leadsTagged } from '../../projections/lead/leads.ts'
import { opportunitiesTagged } from '../../projections/opportunity/opportunities.ts'
import { tasksTagged } from '../../projections/task/tasks.ts'

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
/** A merge is an admin's act: an update it makes runs with admin rights, touching only the tags. */
const MERGING_ADMIN: Actor = { profileId: null, isAdmin: true, isSuperuser: false }

type Tagged = { exists: boolean; deleted: boolean; fields: { tags: string[] } }

/** A retag through a record's own update command (`update`: the command setting these tags); a missing or deleted record decides nothing. */
function retagThrough<Command, State extends Tagged, Event extends DomainEvent>(decider: Decider<Command, State, Event>, update: (retag: Retag, tags: string[]) => Command): Decider<Retag, State, Event> {
  return { ...decider, decide: (retag, state) => (state.exists && !state.deleted ? decider.decide(update(retag, retagged(state.fields.tags, retag)), state) : []) }
}

const retagLead = retagThrough(leadDecider, ({ orgId, at }, tags) => ({ type: 'UpdateLead' as const, orgId, actor: MERGING_ADMIN, at, customFields: [], input: { tags }, replace: false }))
const retagTask = retagThrough(taskDecider, ({ orgId, at }, tags) => ({ type: 'UpdateTask' as const, orgId, actor: MERGING_ADMIN, at, customFields: [], input: { tags }, replace: false }))
const retagCase = retagThrough(caseDecider, ({ orgId, at }, tags) => ({ type: 'UpdateCase' as const, orgId, actor: MERGING_ADMIN, at, customFields: [], input: { tags }, replace: false }))
const retagOpportunity: Decider<Retag, ReturnType<typeof opportunityDecider.initialState>, ReturnType<typeof opportunityDecider.decide>[number]> = {
  ...opportunityDecider,
  decide: (retag, state) => opportunityDecider.decide({ type: 'RetagOpportunity', ...retag }, state),
}

/**
 * A tag merge's retagging (issue 4), as companion commands of the merge: every live account,
 * contact, deal, lead, task and case of the organization tagged `from` gets one update event carrying `into`
 * instead, in the same append as TagMerged (one transaction on PostgreSQL), so a merge is done
 * whole or not at all. Each is decided on its stream as stored, so a record retagged or deleted
 * since the read models were read decides nothing.
 */
export async function retagsOf(db: Db, retag: Retag): Promise<Companion[]> {
  const { orgId, from } = retag
  const [accounts, contacts, deals, leads, tasks, cases] = await Promise.all([accountsTagged(db, orgId, from), contactsTagged(db, orgId, from), opportunitiesTagged(db, orgId, from), leadsTagged(db, orgId, from), tasksTagged(db, orgId, from), casesTagged(db, orgId, from)])
  return [
    ...accounts.map(({ id }) => companion(retagAccount, accountStream(id), retag)),
    ...contacts.map(({ id }) => companion(retagContact, contactStream(id), retag)),
    ...deals.map(({ id }) => companion(retagOpportunity, opportunityStreams.stream(id), retag)),
    ...leads.map(({ id }) => companion(retagLead, leadStreams.stream(id), retag)),
    ...tasks.map(({ id }) => companion(retagTask, taskStream(id), retag)),
    ...cases.map(({ id }) => companion(retagCase, caseStream(id), retag)),
  ]
}
