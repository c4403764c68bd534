import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import type { EventStore, Position } from '../../eventstore/event-store.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { accountOf } from '../../projections/account/accounts.ts'
import type { OpportunityView } from '../../projections/opportunity/opportunities.ts'
import { checkRelations } from '../../projections/record/relations.ts'
import type { Db } from '../../db/database.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import type { PreparedCommand } from '../handle-command.ts'
import { ensureDefaultPipeline, withPipelineOf } from '../pipeline/default-pipeline.ts'
import { dealPipelines } from '../pipeline/kinds.ts'
import type { PipelineFacts } from '../pipeline/pipeline.ts'
import { withClaimedName } from '../unique-name.ts'
import type { NameClaim } from '../unique-name.ts'
import { opportunityDecider, opportunityStreams } from './opportunity.ts'
import type { DealInput, OpportunityCommand } from './opportunity.ts'

/** The name-claim scope of deal names. */
export const DEAL_NAME_SCOPE = 'opportunity_name'

/** A deal command decided against its pipeline folded from the pipeline's stream, with the guard that fails the append if that stream moves meanwhile. */
export const withPipeline = <C extends OpportunityCommand>(store: EventStore, pipelineId: string, command: (pipeline: PipelineFacts) => C): Promise<PreparedCommand<C>> => withPipelineOf(store, dealPipelines, pipelineId, command)

/** 400 naming every relation (account, contacts, tags, assignees, teams) that is not a live record of the organization; what the deal already holds (`current`) may stay. */
export async function checkDealRelations(db: Db, orgId: string, input: DealInput, current?: OpportunityView): Promise<void> {
  const accountMissing = input.account && input.account !== current?.account && !(await accountOf(db, orgId, input.account))
  await checkRelations(db, orgId, input, accountMissing ? { account: ['Expected an account of this organization.'] } : {}, current)
}

/** What creating a deal runs on (the default pipeline may need creating, and waiting for). */
export type DealDeps = Pick<Deps, 'db' | 'lookups' | 'store' | 'clock' | 'projections' | 'config'>

export type CreateDeal = {
  input: DealInput
  /** A chosen id; a fresh one by default. */
  id?: string
  /** The body field a taken name is reported under (`name`; conversion's `company_name`). */
  field?: string
}

/**
 * Creates a deal as POST /api/opportunities/ does: its name claimed (scope `opportunity_name`; a
 * taken name is 400 under `field`), the pipeline (the default one when the input names none)
 * folded from its stream and guarding the append, the organization's default currency and its
 * custom fields for deals as facts, its relations checked first. Answers the id and the position
 * to wait for.
 */
export async function createDeal(deps: DealDeps, caller: Caller, deal: CreateDeal, session: CommandSession = commandSession(deps.store, caller)): Promise<{ id: string; position: Position | null }> {
  await checkDealRelations(deps.db, caller.orgId, deal.input)
  const { id, claim, create } = await dealCreation(deps, caller, deal)
  await withClaimedName(session.run, claim, (run) => run(opportunityDecider, create.streamName, create.prepare, { expectNew: true }))
  return { id, position: session.position() }
}

/**
 * A deal's create as the commands it takes, for createDeal and for a use case that appends it with
 * other records (lead conversion, whose deal points at the account and contact it creates in the
 * same append, so its relations need no check): the name's claim, and the create decided against
 * its pipeline (the default one when the input names none) folded afresh at each attempt, with the
 * guard that fails the append if that pipeline moves meanwhile.
 */
export async function dealCreation(deps: DealDeps, caller: Caller, deal: CreateDeal): Promise<{ id: string; claim: NameClaim; create: { streamName: string; prepare: () => Promise<PreparedCommand<OpportunityCommand>> } }> {
  const { store, clock } = deps
  const { orgId } = caller
  const id = deal.id ?? randomUUID()
  const pipelineId = deal.input.pipeline ?? (await ensureDefaultPipeline(deps, caller))
  const lookups = lookupsOf(deps)
  const [org, customFields] = await Promise.all([lookups.organization(orgId), lookups.customFields(orgId, 'opportunities')])
  const actor = actorOfCaller(caller)
  const prepare = () =>
    withPipeline(store, pipelineId, (pipeline): OpportunityCommand => ({ type: 'CreateOpportunity', opportunityId: id, orgId, actor, at: clock().toISOString(), defaultCurrency: org.default_currency, customFields, pipeline, input: deal.input }))
  return { id, claim: { scope: DEAL_NAME_SCOPE, orgId, ownerId: id, name: deal.input.name!, field: deal.field ?? 'name' }, create: { streamName: opportunityStreams.stream(id), prepare } }
}
