import { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { NotFoundError, orNotFound } from '../../errors.ts'
import type { Viewer } from '../../projections/opportunity/queries.ts'
import { pipelineOf } from '../../projections/pipeline/pipelines.ts'
import type { PipelineWithStages } from '../../projections/pipeline/pipelines.ts'
import { listStageChanges, stageChangePages, stageMetrics } from '../../projections/opportunity/stage-change-queries.ts'
import type { StageChangeFilter } from '../../projections/opportunity/stage-change-queries.ts'
import type { StageChangeRow } from '../../projections/opportunity/stage-changes.ts'
import type { Deps } from '../../deps.ts'
import { ensureDefaultPipeline } from '../../commands/pipeline/default-pipeline.ts'
import { identityOf, viewerOf } from '../kernel/auth.ts'
import { isUuid } from '../kernel/relations.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { AnalyticsQuery, Funnel, FunnelItem, StageChangeList, StageChangeQuery, StageDurationItem, StageDurations } from './stage-change-schemas.ts'
import type { StageChangeItem, StageMetrics } from './stage-change-schemas.ts'
import { callerOf } from '../kernel/commands.ts'
import { csvLine } from '../kernel/csv.ts'

const TAGS = ['opportunities']
const PAGE_SIZE = 1000

type Item = z.infer<typeof StageChangeItem>
type Representation = 'json' | 'ndjson' | 'csv'

const MEDIA: Record<string, Representation> = { 'application/json': 'json', 'application/x-ndjson': 'ndjson', 'text/csv': 'csv', 'application/*': 'json', '*/*': 'json' }

/** The representation the Accept header prefers (highest q, then first listed); JSON when none is offered. */
export function representationOf(accept: string | undefined): Representation {
  const ranges = (accept ?? '').split(',').map((part, index) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase())
    const q = Number(params.find((p) => p.startsWith('q='))?.slice(2) ?? 1)
    return { representation: MEDIA[type], q: Number.isNaN(q) ? 0 : q, index }
  })
  const best = ranges.filter((r) => r.representation && r.q > 0).sort((a, b) => b.q - a.q || a.index - b.index)[0]
  return best?.representation ?? 'json'
}

export const itemOf = (row: StageChangeRow): Item => ({
  position: `${row.position_commit}-${row.position_prepare}`,
  event_type: row.event_type,
  deal_id: row.deal_id,
  deal_name: row.deal_name,
  pipeline_id: row.pipeline_id,
  from_pipeline_id: row.from_pipeline_id,
  from_stage: row.from_stage,
  from_stage_id: row.from_stage_id,
  from_kind: row.from_kind as Item['from_kind'],
  to_stage: row.to_stage,
  to_stage_id: row.to_stage_id,
  to_kind: row.to_kind as Item['to_kind'],
  amount: row.amount,
  currency: row.currency,
  actor: row.actor_id === null ? null : { id: row.actor_id },
  at: row.at.toISOString(),
  days_in_previous_stage: row.days_in_previous_stage,
})

export const CSV_COLUMNS = [
  'position', 'event_type', 'deal_id', 'deal_name', 'pipeline_id', 'from_pipeline_id', 'from_stage', 'from_stage_id', 'from_kind',
  'to_stage', 'to_stage_id', 'to_kind', 'amount', 'currency', 'actor_id', 'at', 'days_in_previous_stage',
] as const

const csvRow = (item: Item) => csvLine(CSV_COLUMNS.map((column) => (column === 'actor_id' ? (item.actor?.id ?? null) : item[column])))

const round = (value: number | null, places: number) => (value === null ? null : Math.round(value * 10 ** places) / 10 ** places)

/**
 * The stage-change feed (issue 8 §2) in three representations, and per-stage analytics over it,
 * read from the stage_changes projector's ledger (see projections/opportunity/stage-changes.ts).
 */
export function stageChangeRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps

  /** The feed as text, page by page from a keyset read: nothing but one page is ever held. */
  async function* lines(viewer: Viewer, filter: StageChangeFilter, representation: 'ndjson' | 'csv'): AsyncGenerator<string> {
    if (representation === 'csv') yield csvLine(CSV_COLUMNS)
    for await (const page of stageChangePages(db, viewer, filter, PAGE_SIZE)) {
      yield page.map((row) => (representation === 'csv' ? csvRow(itemOf(row)) : `${JSON.stringify(itemOf(row))}\n`)).join('')
    }
  }

  /** The pipeline asked for, or the default one; malformed or another organization's: 404. */
  const pipelineFor = async (request: FastifyRequest, reply: FastifyReply, given: string | undefined): Promise<PipelineWithStages> => {
    const { orgId } = identityOf(request)
    const id = given?.trim().toLowerCase()
    if (id !== undefined && id !== '' && !isUuid(id)) throw new NotFoundError('Pipeline not found')
    return orNotFound(pipelineOf(db, orgId, id || (await ensureDefaultPipeline(deps, callerOf(request)))))
  }

  /** Every figure of every current stage of the pipeline, in order (stages no visible deal entered count zero). */
  const analytics = async (request: FastifyRequest, reply: FastifyReply, query: z.infer<typeof AnalyticsQuery>) => {
    const pipeline = await pipelineFor(request, reply, query.pipeline)
    const metrics = await stageMetrics(db, viewerOf(request), pipeline.id, { from: query.from, to: query.to })
    const stages = pipeline.stages.map((stage): StageMetrics => {
      const m = metrics.get(stage.id)
      const entered = m?.entered ?? 0
      return {
        stage: stage.code, stage_id: stage.id, label: stage.label, kind: stage.kind, order: stage.position,
        entered, completed_stays: m?.completed_stays ?? 0, median_days: round(m?.median_days ?? null, 2), p90_days: round(m?.p90_days ?? null, 2),
        exited_forward: m?.exited_forward ?? 0, won: m?.won ?? 0, lost: m?.lost ?? 0, reached_won: m?.reached_won ?? 0, conversion_rate: entered ? round((m?.reached_won ?? 0) / entered, 4) : null,
      }
    })
    return { error: false as const, pipeline: { id: pipeline.id, name: pipeline.name }, from: query.from ?? null, to: query.to ?? null, stages }
  }

  const errors = { 404: ErrorBody, ...authErrors } as const

  return async (app) => {
    app.get('/api/opportunities/stage-changes/', {
      schema: {
        tags: TAGS,
        summary: 'Every stage change of the organization\'s deals, oldest first (creation included as the entry into the first stage)',
        description: 'Representations by Accept: JSON (default) pages by limit (default 10) and offset; `application/x-ndjson` streams one JSON object per line and `text/csv` streams CSV with a header row (a cell that could start a spreadsheet formula is prefixed with `\'`), both the whole filtered set (limit/offset ignored), read in pages of 1000 by log position. A non-admin sees only deals they created or are assigned to (as of now); deleted deals are left out. Malformed filter values match nothing; blank ones are no filter.',
        querystring: StageChangeQuery,
        response: { 200: StageChangeList, ...authErrors },
      },
    }, async (request, reply) => {
      const viewer = viewerOf(request)
      const { limit, offset, at__gte, at__lte, ...rest } = request.query
      const filter: StageChangeFilter = { ...rest, atFrom: at__gte, atTo: at__lte }
      const representation = representationOf(request.headers.accept)
      reply.header('vary', 'Accept')
      if (representation !== 'json') {
        reply.type(representation === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        // A stream is sent as is, past the JSON schema's serializer.
        return (reply as FastifyReply).send(Readable.from(lines(viewer, filter, representation)))
      }
      const { count, rows } = await listStageChanges(db, viewer, filter, { limit, offset })
      return { error: false as const, count, offset, limit, results: rows.map(itemOf) }
    })

    const answers = [
      { path: 'stage-durations', response: StageDurations, item: StageDurationItem, summary: 'Per stage of a pipeline: deals entered and how long completed stays lasted (median, p90)' },
      { path: 'funnel', response: Funnel, item: FunnelItem, summary: 'Per stage of a pipeline: deals entered, exited forward, won, lost, and their conversion to won' },
    ] as const
    for (const { path, response, item, summary } of answers) {
      // Typed loosely here (the two answers differ); each still validates and documents its own schema.
      const description = 'Computed in SQL from the stage-change ledger, exact over the whole history and the same after a rebuild.'
      app.get(`/api/opportunities/analytics/${path}/`, { schema: { tags: TAGS, summary, description, querystring: AnalyticsQuery, response: { 200: response as z.ZodType, ...errors } } }, async (request, reply) => {
        const { stages, ...envelope } = await analytics(request, reply, request.query)
        return { ...envelope, stages: stages.map((stage) => item.parse(stage)) }
      })
    }
  }
}
