import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { CASE_STATUSES } from '../../commands/case/fields.ts'
import type { CaseStatus } from '../../commands/case/fields.ts'
import { statusOfStage } from '../../commands/case/move.ts'
import { moveCase } from '../../commands/case/move-case.ts'
import { visibleCase } from '../../commands/case/write-case.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError, orNotFound } from '../../errors.ts'
import { CASE_BOARD, caseConditions, caseStageColumn, caseStatusColumn } from '../../projections/case/queries.ts'
import type { CaseRecord } from '../../projections/case/queries.ts'
import { boardCards, inColumns } from '../../projections/kernel/record-board.ts'
import { casePipelineModel } from '../../projections/pipeline/pipelines.ts'
import type { PipelineStageRow } from '../../projections/pipeline/pipelines.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { isUuid } from '../kernel/relations.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { filterOf } from './case-filter.ts'
import { activeCaseFields, casesOf } from './case-views.ts'
import { CaseBoard, CaseBoardQuery, CaseMoveAnswer, CaseMoveBody } from './schemas.ts'

const TAGS = ['cases']
/** As on the other boards: each column shows at most this many cards; case_count still counts them all. */
const CARDS_PER_COLUMN = 100
/** The original's status board: its columns' colours and types. */
const STATUS_LOOK: Record<CaseStatus, { color: string; type: 'open' | 'closed' | 'rejected' }> = {
  New: { color: '#3B82F6', type: 'open' },
  Assigned: { color: '#8B5CF6', type: 'open' },
  Pending: { color: '#F59E0B', type: 'open' },
  Closed: { color: '#22C55E', type: 'closed' },
  Rejected: { color: '#EF4444', type: 'rejected' },
  Duplicate: { color: '#6B7280', type: 'rejected' },
}

const statusColumns = CASE_STATUSES.map((status, i) => ({ key: status, id: status, name: status, order: i + 1, color: STATUS_LOOK[status].color, stage_type: STATUS_LOOK[status].type, stage_kind: null, maps_to_status: status, is_status_column: true }))
const stageColumns = (stages: readonly PipelineStageRow[]) =>
  stages.map((stage) => {
    const status = statusOfStage(stages, stage)
    return { key: stage.id, id: stage.id, name: stage.label, order: stage.position, color: null, stage_type: STATUS_LOOK[status].type, stage_kind: stage.kind, maps_to_status: status, is_status_column: false }
  })

/**
 * The case board (the original's /api/cases/kanban/: by status, or by the stages of the case
 * pipeline named) and the card move (/api/cases/{id}/move/). The board has the case list's filters
 * and visibility; merged duplicates stay off it unless show_merged=true.
 */
export function caseBoardRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    app.get('/api/cases/kanban/', { schema: { tags: TAGS, summary: 'The case board: a column per status, or per stage of the case pipeline named (pipeline_id), at most 100 cards each', description: 'Every case list filter applies, with the same visibility. Cards by kanban_order.', querystring: CaseBoardQuery, response: { 200: CaseBoard, 400: ErrorBody, 404: ErrorBody, ...authErrors } } }, async (request) => {
      const viewer = viewerOf(request)
      const { pipeline_id: given, ...query } = request.query
      const id = given?.trim().toLowerCase()
      if (id !== undefined && id !== '' && !isUuid(id)) throw new NotFoundError('Pipeline not found')
      const pipeline = id ? await orNotFound(casePipelineModel.pipelineOf(db, viewer.orgId, id)) : null
      const now = clock()
      const conditions = caseConditions(viewer, filterOf(query, await activeCaseFields(deps, viewer.orgId), now))
      const columns = pipeline ? stageColumns(pipeline.stages) : statusColumns
      const column = pipeline ? caseStageColumn : caseStatusColumn
      if (pipeline) conditions.push(inColumns(column, columns.map((c) => c.key)))
      const { rows, counts } = await boardCards<CaseRecord>(db, CASE_BOARD, conditions, column, columns.map((c) => c.key), CARDS_PER_COLUMN)
      const cards = await casesOf(deps, viewer, rows, now)
      return {
        mode: pipeline ? ('pipeline' as const) : ('status' as const),
        pipeline: pipeline && { id: pipeline.id, name: pipeline.name, is_default: pipeline.is_default },
        columns: columns.map(({ key, ...rest }) => ({ ...rest, wip_limit: null, case_count: counts.get(key) ?? 0, cases: cards.filter((_, i) => rows[i]!.column_key === key) })),
        total_cases: [...counts.values()].reduce((a, b) => a + b, 0),
      }
    })

    app.patch('/api/cases/:id/move/', { schema: { tags: TAGS, summary: 'Move a case card on the board (admin, creator or assignee)', description: "stage_id places it in a stage of a case pipeline (its status follows the stage: the first stage New, other open stages Assigned, won Closed, lost Rejected); status moves it on the status board (and wins over the stage's). Into Closed, the case is dated the day of the move unless it has a closing date. kanban_order, above_case_id or below_case_id place it in the column; otherwise it goes to the column's end when it enters a column. Answers the moved card.", params: IdParams, body: CaseMoveBody, response: { 200: CaseMoveAnswer, 400: ErrorBody, ...authErrors, 404: ErrorBody, 409: ErrorBody } } }, async (request, reply) => {
      const { stage_id, status, kanban_order, above_case_id, below_case_id } = request.body
      const commands = requestCommands(deps, request, reply)
      await moveCase(deps, callerOf(request), request.params.id, { stageId: stage_id, status, kanbanOrder: kanban_order, aboveId: above_case_id, belowId: below_case_id }, commands.session)
      await commands.settle()
      const row = await visibleCase(db, callerOf(request), request.params.id)
      const [card] = await casesOf(deps, viewerOf(request), [row], clock())
      return { error: false as const, message: 'Case moved successfully', case: card! }
    })
  }
}
