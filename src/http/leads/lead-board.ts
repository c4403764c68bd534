import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { leadDecider, leadStreams, LEAD_STATUSES, CLOSED_LEAD_STATUSES } from '../../commands/lead/lead.ts'
import { placeBetween } from '../../commands/opportunity/placement.ts'
import { mayAccess } from '../../visibility/policy.ts'
import { leadPipelines } from '../../commands/pipeline/kinds.ts'
import { NotFoundError, ValidationError, orNotFound } from '../../errors.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import { agingStatus, daysSince } from '../../projections/opportunity/aging.ts'
import { definitionsOf } from '../../projections/custom-field/custom-fields.ts'
import { inColumns } from '../../projections/kernel/record-board.ts'
import type { BoardColumn } from '../../projections/kernel/record-board.ts'
import { boardLeads, leadCardOf, leadNeighbourOrder, stageColumn, statusColumn } from '../../projections/lead/lead-board.ts'
import { leadConditions, leadOf } from '../../projections/lead/leads.ts'
import type { LeadRow } from '../../projections/lead/leads.ts'
import { leadPipelineModel } from '../../projections/pipeline/pipelines.ts'
import type { PipelineStageRow, PipelineWithStages } from '../../projections/pipeline/pipelines.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { actorOf } from '../kernel/commands.ts'
import { ensureDefaultPipeline, withPipelineOf } from '../../commands/pipeline/default-pipeline.ts'
import { leadFilterOf } from './lead-filter.ts'
import { leadsOf } from './lead-views.ts'
import { identityOf } from '../kernel/auth.ts'
import { isUuid } from '../kernel/relations.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { LeadBoard, LeadBoardQuery, LeadMoveAnswer, LeadMoveBody } from './schemas.ts'
import type { LeadCard } from './schemas.ts'
import { visibleLeadOf } from './leads.ts'

const TAGS = ['leads']
/** As on the deal board (§4.6): each column shows at most this many cards; item_count still counts them all. */
const CARDS_PER_COLUMN = 100
const { pipelineOf, listPipelines } = leadPipelineModel

/** The stage that shows the leads never moved: the default lead pipeline's first open stage. */
const inboxOf = (defaultPipeline: PipelineWithStages | undefined) => defaultPipeline?.stages.find((s) => s.kind === 'open')?.id ?? null

type Located = { stage: PipelineStageRow | undefined; row: LeadRow }

/** A status board's columns (§2.5), keyed by status: converted counts as won, closed as lost. */
const STATUS_COLUMNS = LEAD_STATUSES.map((status, i) => {
  const kind = status === 'converted' ? ('won' as const) : CLOSED_LEAD_STATUSES.includes(status) ? ('lost' as const) : ('open' as const)
  return { key: status, id: status, name: status, order: i + 1, kind, expected_days: null, warning_days: null }
})
/** A pipeline board's columns, keyed by stage id. */
const stageColumns = (pipeline: PipelineWithStages) => pipeline.stages.map((s) => ({ key: s.id, id: s.code, name: s.label, order: s.position, kind: s.kind, expected_days: s.expected_days, warning_days: s.warning_days }))

/**
 * The lead board (issue #7: the index's /api/leads/kanban/ and /api/leads/{id}/move/, following the
 * deal board of §4.6 and §4.7). Cards are the lead's list fields plus its place on the board; the
 * same filters and visibility as the lead list (a non-admin sees leads they created or are assigned
 * to). A lead never moved shows in the default lead pipeline's first open stage until its first move
 * places it. Moves never change status (commands/lead/move.ts).
 */
export function leadBoardRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, store, clock } = deps

  /** Ensures the default lead pipeline exists; answers it and the board column expression every move and board share. */
  const defaults = async (request: FastifyRequest) => {
    const id = await ensureDefaultPipeline(deps, callerOf(request), leadPipelines)
    const pipeline = await orNotFound(pipelineOf(db, identityOf(request).orgId, id))
    return { pipeline, column: stageColumn(inboxOf(pipeline)) }
  }

  const cardsOf = async (request: FastifyRequest, located: Located[], now: Date): Promise<z.infer<typeof LeadCard>[]> => {
    const actor = actorOf(request)
    const leads = await leadsOf(db, identityOf(request).orgId, located.map((l) => l.row), now)
    return located.map(({ stage, row }, i) => {
      const days = stage ? daysSince(row.stage_changed_at ?? row.created_at, now) : null
      return {
        ...leads[i]!,
        pipeline: stage?.pipeline_id ?? null,
        stage: stage?.code ?? null,
        stage_label: stage?.label ?? null,
        stage_kind: stage?.kind ?? null,
        days_in_stage: days,
        aging_status: stage ? agingStatus(stage.kind, days, stage) : null,
        can_move: mayAccess('Lead', { createdBy: row.created_by, assignedTo: row.assigned_to }, actor),
      }
    })
  }

  /** Where a moved card goes (the deal board's rules): kanban_order, else next to above_id/below_id, else the column's end when it enters the column. */
  const placement = async (orgId: string, lead: LeadRow, column: BoardColumn, stage: PipelineStageRow | undefined, body: z.infer<typeof LeadMoveBody>): Promise<number | null> => {
    if (body.kanban_order !== undefined) return body.kanban_order
    if (!stage) return null
    const inColumn = { expression: column, key: stage.id }
    const neighbour = async (field: 'above_id' | 'below_id', id: string) => {
      const card = await leadCardOf(db, orgId, column, id)
      if (!card || card.column_key !== stage.id) throw new ValidationError({ [field]: ['Expected a card of the target column.'] })
      return card.kanban_order
    }
    if (body.above_id) {
      const above = await neighbour('above_id', body.above_id)
      return placeBetween(above, await leadNeighbourOrder(db, orgId, inColumn, above, 'next', lead.id))
    }
    if (body.below_id) {
      const below = await neighbour('below_id', body.below_id)
      return placeBetween(await leadNeighbourOrder(db, orgId, inColumn, below, 'previous', lead.id), below)
    }
    const current = await leadCardOf(db, orgId, column, lead.id)
    return current?.column_key === stage.id ? null : placeBetween(await leadNeighbourOrder(db, orgId, inColumn, null, 'previous', lead.id), null)
  }

  return async (app) => {
    app.get('/api/leads/kanban/', { schema: { tags: TAGS, summary: 'The lead board: a column per stage of a lead pipeline (or per status), at most 100 cards each', description: 'Every lead list filter applies, with the same visibility. Cards by kanban_order.', querystring: LeadBoardQuery, response: { 200: LeadBoard, 404: ErrorBody, ...authErrors } } }, async (request) => {
      const identity = identityOf(request)
      const now = clock()
      const query = request.query
      const given = query.pipeline?.trim().toLowerCase()
      if (given !== undefined && !isUuid(given)) throw new NotFoundError('Pipeline not found')
      const { pipeline: defaultPipeline } = await defaults(request)
      const pipeline = given === undefined ? (query.mode === 'status' ? null : defaultPipeline) : await orNotFound(pipelineOf(db, identity.orgId, given))
      const definitions = await definitionsOf(db, identity.orgId, 'leads', { activeOnly: true })
      const conditions = leadConditions(viewerOfIdentity(identity), leadFilterOf(query, definitions))
      // Leads never moved show on the default pipeline's board only.
      const onBoard = pipeline && stageColumn(pipeline.is_default ? inboxOf(pipeline) : null)
      const stages = new Map((await listPipelines(db, identity.orgId)).flatMap((p) => p.stages.map((s) => [s.id, s] as const)))
      const columns = query.mode === 'status' ? STATUS_COLUMNS : stageColumns(pipeline!)
      // A status board of one pipeline shows only that board's leads.
      if (query.mode === 'status' && pipeline) conditions.push(inColumns(onBoard!, pipeline.stages.map((s) => s.id)))
      const { rows, counts } = await boardLeads(db, conditions, query.mode === 'status' ? statusColumn : onBoard!, columns.map((c) => c.key), CARDS_PER_COLUMN)
      const cards = await cardsOf(request, rows.map((row) => ({ row, stage: stages.get(query.mode === 'status' ? (row.stage_id ?? '') : row.column_key) })), now)
      return {
        mode: query.mode,
        pipeline: pipeline && { id: pipeline.id, name: pipeline.name, is_default: pipeline.is_default },
        columns: columns.map(({ key, ...column }) => ({ ...column, color: null, stage_type: column.kind, is_status_column: true, wip_limit: null, item_count: counts.get(key) ?? 0, items: cards.filter((_, i) => rows[i]!.column_key === key) })),
        total_items: [...counts.values()].reduce((a, b) => a + b, 0),
      }
    })

    app.patch('/api/leads/:id/move/', { schema: { tags: TAGS, summary: 'Move a lead card on the board (admin, creator or assignee)', description: 'Places the lead in a stage (column_id) of its lead pipeline, of the default one for a lead never moved, or of the `pipeline` named; above_id/below_id/kanban_order place it in the column as on the deal board. Never changes the status: moving into a won stage does not convert the lead. Answers the moved card.', params: IdParams, body: LeadMoveBody, response: { 200: LeadMoveAnswer, 400: ErrorBody, ...authErrors, 404: ErrorBody, 409: ErrorBody } } }, async (request, reply) => {
      const { orgId } = identityOf(request)
      const current = await visibleLeadOf(deps, request, request.params.id)
      const { pipeline: defaultPipeline, column } = await defaults(request)
      const body = request.body
      const pipelineId = body.pipeline?.toLowerCase() ?? current.pipeline_id ?? defaultPipeline.id
      const target = await pipelineOf(db, orgId, pipelineId)
      const kanbanOrder = await placement(orgId, current, column, target?.stages.find((s) => s.code === body.column_id), body)
      const commands = requestCommands(deps, request, reply)
      const at = clock()
      const prepare = () => withPipelineOf(store, leadPipelines, pipelineId, (pipeline) => ({ type: 'MoveLead' as const, orgId, actor: actorOf(request), at: at.toISOString(), pipeline, pipelineNamed: body.pipeline !== undefined, columnId: body.column_id, kanbanOrder }))
      await commands.run(leadDecider, leadStreams.stream(current.id), prepare)
      await commands.settle()
      const row = await orNotFound(leadOf(db, orgId, current.id))
      const stage = row.stage_id ? (await pipelineOf(db, orgId, row.pipeline_id!))?.stages.find((s) => s.id === row.stage_id) : undefined
      const [card] = await cardsOf(request, [{ row, stage }], at)
      return { error: false as const, message: 'Lead moved', lead: card! }
    })
  }
}
