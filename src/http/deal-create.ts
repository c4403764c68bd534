import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CommandRunner } from '../commands/command-runner.ts'
import type { PreparedCommand } from '../commands/handle-command.ts'
import { opportunityDecider, opportunityStreams } from '../commands/opportunity/opportunity.ts'
import type { DealInput, OpportunityCommand, PipelineFacts } from '../commands/opportunity/opportunity.ts'
import type { Actor } from '../commands/opportunity/rules.ts'
import { dealPipelines } from '../commands/pipeline/kinds.ts'
import { withClaimedName } from '../commands/unique-name.ts'
import type { EventStore } from '../eventstore/event-store.ts'
import { organizationById } from '../identity/organizations.ts'
import { definitionsOf } from '../projections/custom-fields.ts'
import type { AppDeps } from './app.ts'
import { ensureDefaultPipeline, withPipelineOf } from './default-pipeline.ts'
import { identityOf } from './plugins/auth.ts'

/** The name-claim scope of deal names. */
export const DEAL_NAME_SCOPE = 'opportunity_name'

/** A deal command decided against its pipeline folded from the pipeline's stream, with the guard that fails the append if that stream moves meanwhile. */
export const withPipeline = <C extends OpportunityCommand>(store: EventStore, pipelineId: string, command: (pipeline: PipelineFacts) => C): Promise<PreparedCommand<C>> => withPipelineOf(store, dealPipelines, pipelineId, command)

/**
 * A deal created the way POST /api/opportunities/ creates one: its name claimed (scope
 * `opportunity_name`; a taken name is 400 under `field`), the pipeline (the default one when the
 * input names none) folded from its stream and guarding the append, the organization's default
 * currency and its custom fields for deals as facts. Lead conversion uses it; relations are the
 * caller's to check. POST /api/opportunities/ and lead conversion both create deals through it.
 */
export async function createDeal(deps: AppDeps, request: FastifyRequest, reply: FastifyReply, run: CommandRunner, deal: { id: string; input: DealInput; actor: Actor; field: string }): Promise<void> {
  const { db, store, clock } = deps
  const { orgId } = identityOf(request)
  const pipelineId = deal.input.pipeline ?? (await ensureDefaultPipeline(deps, request, reply))
  const [org, customFields] = await Promise.all([organizationById(db, orgId), definitionsOf(db, orgId, 'opportunities', { activeOnly: false })])
  const prepare = () =>
    withPipeline(store, pipelineId, (pipeline) => ({ type: 'CreateOpportunity', opportunityId: deal.id, orgId, actor: deal.actor, at: clock().toISOString(), defaultCurrency: org.default_currency, customFields, pipeline, input: deal.input }))
  await withClaimedName(run, { scope: DEAL_NAME_SCOPE, orgId, ownerId: deal.id, name: deal.input.name!, field: deal.field }, () => run(opportunityDecider, opportunityStreams.stream(deal.id), prepare, { expectNew: true }))
}
