import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { fold } from '../../commands/decider.ts'
import { dealPipelines } from '../../commands/pipeline/kinds.ts'
import type { PipelineKind } from '../../commands/pipeline/kinds.ts'
import type { PipelineEvent } from '../../commands/pipeline/pipeline.ts'
import type { PipelineCommand } from '../../commands/pipeline/pipeline.ts'
import { MAX_DAYS, MIN_DAYS, STAGE_KINDS } from '../../commands/pipeline/stage-rules.ts'
import { orNotFound } from '../../errors.ts'
import { countDeals } from '../../projections/opportunity/opportunities.ts'
import { domainEventOf } from '../../events/versions.ts'
import { dealPipelineModel } from '../../projections/pipeline/pipelines.ts'
import type { PipelineReadModel, PipelineWithStages } from '../../projections/pipeline/pipelines.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { ensureDefaultPipeline, newStageIds } from '../../commands/pipeline/default-pipeline.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { formList, formNumber } from '../kernel/schemas/form-values.ts'
import type { Db } from '../../db/database.ts'

const DAYS = `Integer ${MIN_DAYS} to ${MAX_DAYS}, or null (never rots); always null for won and lost stages`
const Days = z.number().int(`Expected an integer from ${MIN_DAYS} to ${MAX_DAYS}, or null`).nullable().describe(DAYS)
/** Days in a body: JSON numbers or their text forms (form bodies); answers use Days. */
const DaysIn = formNumber(Days)
const Kind = z.enum(STAGE_KINDS)
const Stage = z.object({
  id: z.uuid(),
  code: z.string().describe('Stored on the deal. Derived from the label at creation (uppercase, other characters to `_`, `_2`, `_3`... when taken) and never changed'),
  label: z.string().describe('Unique within the pipeline, case-insensitively'),
  order: z.number().int().describe('1-based position in the pipeline'),
  kind: Kind,
  expected_days: Days,
  warning_days: Days,
  probability: z.number().int().nullable().describe("Default probability of a deal in this stage when its own is 0 or unset: 100 won, 0 lost, 10/25/50/75 for the seeded open stages, null (none) for other open stages"),
})
const Pipeline = z.object({ id: z.uuid(), name: z.string(), is_default: z.boolean(), stages: z.array(Stage).describe('In order') })
const Name = z.string().trim().min(1, 'This field may not be blank.').max(200)
const PipelineBody = z.object({ name: Name })
const StageBody = z.object({ label: z.string().trim().min(1, 'This field may not be blank.').max(100), kind: Kind, expected_days: DaysIn.optional(), warning_days: DaysIn.optional() })
const StagePatch = StageBody.partial()
const ReorderBody = z.object({ stage_ids: formList(z.array(z.uuid())).describe('Every stage of the pipeline exactly once, in the new order') })
const Thresholds = z.object({ expected_days: Days, warning_days: Days })
const AgingConfig = z.record(z.string(), Thresholds).describe("Rotting days of the default pipeline's open stages, keyed by stage code")
const AgingUpdate = z
  .record(z.string(), Thresholds.partial())
  .describe("Stage codes of the default pipeline to change; codes and fields left out keep their values. A won or lost stage's thresholds may only be null")
const NoContent = z.null().describe('No content')
const errors = { ...authErrors, 404: ErrorBody } as const
const writeErrors = { 400: ErrorBody, ...errors } as const

/**
 * What the pipeline administration routes of one kind need (§4.5 for deals; the lead and task
 * pipelines of the route index follow them): the kind (decider, streams, default), its read model, the path
 * prefix, the method that renames a pipeline and changes a stage (the index says PATCH for deals,
 * PUT for leads), and how to count the records in a stage or pipeline for the counted writes.
 */
export type PipelineModule = {
  kind: PipelineKind
  model: PipelineReadModel
  base: '/api/opportunities' | '/api/leads' | '/api/tasks' | '/api/cases'
  updateMethod: 'PATCH' | 'PUT'
  tags: string[]
  count(db: Db, where: { stageId: string } | { pipelineId: string }): Promise<number>
}

const DEALS: PipelineModule = { kind: dealPipelines, model: dealPipelineModel, base: '/api/opportunities', updateMethod: 'PATCH', tags: ['pipelines'], count: countDeals }

const pipelineBody = (row: PipelineWithStages): z.infer<typeof Pipeline> => ({
  id: row.id,
  name: row.name,
  is_default: row.is_default,
  stages: row.stages.map(({ id, code, label, position, kind, expected_days, warning_days, probability }) => ({ id, code, label, order: position, kind, expected_days, warning_days, probability })),
})

const agingBody = (row: PipelineWithStages): z.infer<typeof AgingConfig> =>
  Object.fromEntries(row.stages.filter((s) => s.kind === 'open').map((s) => [s.code, { expected_days: s.expected_days, warning_days: s.warning_days }]))

/** The writes of one kind's pipelines, for its administration routes and the deals' aging-config. */
function pipelineWrites(deps: Deps, { kind, count }: PipelineModule) {
  const { db, clock, store, projections, config } = deps
  const now = () => clock().toISOString()
  /** Runs one command on a pipeline's stream and waits until the read models show it (read-your-writes). */
  const write = async (request: FastifyRequest, reply: FastifyReply, pipelineId: string, command: PipelineCommand) => {
    const commands = requestCommands(deps, request, reply)
    await commands.run(kind.decider, kind.streams.stream(pipelineId), command)
    await commands.settle()
  }
  /**
   * A write whose rule counts deals (or leads; removing a stage, changing its kind, deleting a
   * pipeline): lock the stage or pipeline (closed to them), wait until the read models reach the
   * lock, count, decide. Records enter only by a guarded append that fails once the pipeline stream
   * moves, so every one that got in precedes the lock in the log and is counted (see `LockStage`).
   * A refusal unlocks.
   */
  const countedWrite = async (request: FastifyRequest, reply: FastifyReply, pipelineId: string, orgId: string, stageId: string | null, decide: (dealCount: number) => PipelineCommand) => {
    const commands = requestCommands(deps, request, reply)
    const stream = kind.streams.stream(pipelineId)
    const { decider } = kind
    // A dry run first, as if locked and empty: a request refused for any other reason (a label, a
    // threshold, the last stage of a kind) records nothing, not even a lock.
    const locked: PipelineEvent = stageId === null ? { type: 'PipelineLocked', data: { at: now() } } : { type: 'StageLocked', data: { stage_id: stageId, at: now() } }
    decider.decide(decide(0), decider.evolve(fold(decider, (await store.readStream(stream)).map((e) => domainEventOf<PipelineEvent>(e))), locked))
    await commands.run(decider, stream, { type: 'LockStage', orgId, stageId, at: now() })
    const fence = (await store.readStream(stream)).at(-1)
    if (fence) await projections.waitFor(fence.position, config.readYourWritesTimeoutMs)
    const counted = await count(db, stageId === null ? { pipelineId } : { stageId })
    try {
      await commands.run(decider, stream, decide(counted))
    } catch (error) {
      await commands.run(decider, stream, { type: 'UnlockStage', orgId, stageId, at: now() })
      throw error
    }
    await commands.settle()
  }
  return { write, countedWrite }
}

/**
 * Pipeline administration of one kind (§4.5): members read, admins write. The organization's
 * default pipeline is created on first use. These paths have static segments (`pipelines`,
 * `stages`); find-my-way prefers them to a generic `<base>/:id/` route whatever the order.
 */
export function pipelineAdminRoutes(deps: Deps, module: PipelineModule): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const { kind, model, base, tags } = module
  const records = kind.rules.records
  const now = () => clock().toISOString()
  const detail = async (orgId: string, id: string) => pipelineBody(await orNotFound(model.pipelineOf(db, orgId, id)))
  const ensureDefault = (request: FastifyRequest) => ensureDefaultPipeline(deps, callerOf(request), kind)
  const { write, countedWrite } = pipelineWrites(deps, module)
  const adminPipeline = async (request: FastifyRequest, id: string) => {
    const { orgId } = requireAdmin(request)
    return orNotFound(model.pipelineOf(db, orgId, id))
  }
  const adminStage = async (request: FastifyRequest, id: string) => {
    const { orgId } = requireAdmin(request)
    return orNotFound(model.stageOf(db, orgId, id))
  }
  const seeded = kind.rules.seed.map((s) => s.code).join(', ')
  const P = `${base}/pipelines/`

  return async (app) => {
    app.get(P, { schema: { tags, summary: "The organization's pipelines, the default first, then by creation", response: { 200: z.object({ pipelines: z.array(Pipeline) }), ...authErrors } } }, async (request) => {
      await ensureDefault(request)
      return { pipelines: (await model.listPipelines(db, identityOf(request).orgId)).map(pipelineBody) }
    })

    app.post(P, { schema: { tags, summary: `Create a pipeline seeded with the default stages (admins): ${seeded}`, description: 'Names need not be unique.', body: PipelineBody, response: { 201: Pipeline, ...writeErrors } } }, async (request, reply) => {
      const { orgId, profileId } = requireAdmin(request)
      await ensureDefault(request)
      const id = randomUUID()
      await write(request, reply, id, { type: 'CreatePipeline', pipelineId: id, orgId, name: request.body.name, isDefault: false, stageIds: newStageIds(kind), actorId: profileId, at: now() })
      return reply.code(201).send(await detail(orgId, id))
    })

    app.get(`${P}:id/`, { schema: { tags, summary: 'One pipeline with its stages', params: IdParams, response: { 200: Pipeline, ...errors } } }, async (request) => detail(identityOf(request).orgId, request.params.id))

    app.route({ method: module.updateMethod, url: `${P}:id/`, schema: { tags, summary: 'Rename a pipeline (admins)', params: IdParams, body: PipelineBody, response: { 200: Pipeline, ...writeErrors } }, handler: async (request, reply) => {
      const pipeline = await adminPipeline(request, request.params.id)
      await write(request, reply, pipeline.id, { type: 'RenamePipeline', orgId: pipeline.org_id, name: request.body.name, at: now() })
      return detail(pipeline.org_id, pipeline.id)
    } })

    app.delete(`${P}:id/`, { schema: { tags, summary: `Delete a pipeline (admins); 400 for the default pipeline or while ${records} are in it`, params: IdParams, response: { 204: NoContent, ...writeErrors } } }, async (request, reply) => {
      const pipeline = await adminPipeline(request, request.params.id)
      await countedWrite(request, reply, pipeline.id, pipeline.org_id, null, (dealCount) => ({ type: 'DeletePipeline', orgId: pipeline.org_id, dealCount, at: now() }))
      return reply.code(204).send(null)
    })

    app.post(`${P}:id/stages/`, { schema: { tags, summary: 'Append a stage (admins); answers the whole pipeline', params: IdParams, body: StageBody, response: { 201: Pipeline, ...writeErrors } } }, async (request, reply) => {
      const pipeline = await adminPipeline(request, request.params.id)
      await write(request, reply, pipeline.id, { type: 'AddStage', orgId: pipeline.org_id, stageId: randomUUID(), ...request.body, at: now() })
      return reply.code(201).send(await detail(pipeline.org_id, pipeline.id))
    })

    app.post(`${P}:id/stages/reorder/`, { schema: { tags, summary: 'Reorder the stages (admins)', params: IdParams, body: ReorderBody, response: { 200: Pipeline, ...writeErrors } } }, async (request, reply) => {
      const pipeline = await adminPipeline(request, request.params.id)
      await write(request, reply, pipeline.id, { type: 'ReorderStages', orgId: pipeline.org_id, stageIds: request.body.stage_ids, at: now() })
      return detail(pipeline.org_id, pipeline.id)
    })

    app.route({ method: module.updateMethod, url: `${base}/stages/:id/`, schema: { tags, summary: "Change a stage's label, kind or thresholds (admins); answers its pipeline", description: `Any of the stage fields; changing the kind to won or lost clears the thresholds. 400 for a kind change while ${records} are in the stage or of the last stage of its kind.`, params: IdParams, body: StagePatch, response: { 200: Pipeline, ...writeErrors } }, handler: async (request, reply) => {
      const stage = await adminStage(request, request.params.id)
      const update = (dealsInStage: number): PipelineCommand => ({ type: 'UpdateStage', orgId: stage.org_id, stageId: stage.id, ...request.body, dealsInStage, at: now() })
      const kindChanges = request.body.kind !== undefined && request.body.kind !== stage.kind
      await (kindChanges ? countedWrite(request, reply, stage.pipeline_id, stage.org_id, stage.id, update) : write(request, reply, stage.pipeline_id, update(0)))
      return detail(stage.org_id, stage.pipeline_id)
    } })

    app.delete(`${base}/stages/:id/`, { schema: { tags, summary: `Remove a stage (admins); not the last of its kind, nor while ${records} are in it`, params: IdParams, response: { 204: NoContent, ...writeErrors } } }, async (request, reply) => {
      const stage = await adminStage(request, request.params.id)
      await countedWrite(request, reply, stage.pipeline_id, stage.org_id, stage.id, (dealsInStage) => ({ type: 'RemoveStage', orgId: stage.org_id, stageId: stage.id, dealsInStage, at: now() }))
      return reply.code(204).send(null)
    })
  }
}

/** Deal pipeline administration (§4.5) and the older aging-config routes (§4.2, §9) of the default deal pipeline. */
export function pipelineRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  const { write } = pipelineWrites(deps, DEALS)
  const { pipelineOf } = DEALS.model
  const tags = DEALS.tags
  return async (app) => {
    await app.register(pipelineAdminRoutes(deps, DEALS))

    app.get('/api/opportunities/aging-config/', { schema: { tags, summary: "Rotting days of the default pipeline's open stages, keyed by stage code", response: { 200: AgingConfig, ...authErrors } } }, async (request) => {
      const id = await ensureDefaultPipeline(deps, callerOf(request))
      return agingBody(await orNotFound(pipelineOf(db, identityOf(request).orgId, id)))
    })

    app.put('/api/opportunities/aging-config/', { schema: { tags, summary: "Change rotting days of the default pipeline's stages (admins)", body: AgingUpdate, response: { 200: AgingConfig, 400: ErrorBody, ...authErrors } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const id = await ensureDefaultPipeline(deps, callerOf(request))
      await write(request, reply, id, { type: 'SetStageThresholds', orgId, thresholds: request.body, at: deps.clock().toISOString() })
      return agingBody(await orNotFound(pipelineOf(db, orgId, id)))
    })
  }
}
