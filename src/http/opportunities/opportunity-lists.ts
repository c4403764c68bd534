import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { CF_PREFIX, customFieldFilter } from '../../commands/custom-field/values.ts'
import type { Definition } from '../../commands/custom-field/values.ts'
import { NotFoundError, orNotFound } from '../../errors.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { liveAccounts } from '../../projections/account/accounts.ts'
import { liveContacts } from '../../projections/contact/contacts.ts'
import { boardDeals, dealQuery, listDeals } from '../../projections/opportunity/queries.ts'
import type { DealFilter, Memo } from '../../projections/opportunity/queries.ts'
import { IDENTITY, readStamps, stampedCache, stampsKey } from '../../projections/kernel/stamped-cache.ts'
import { daysChangeAt } from '../../projections/opportunity/aging.ts'
import { pipelineOf } from '../../projections/pipeline/pipelines.ts'
import type { Deps } from '../../deps.ts'
import { ensureDefaultPipeline } from '../../commands/pipeline/default-pipeline.ts'
import { opportunitiesOf, timeAgoChangesAt } from './opportunity-views.ts'
import { CARDS_PER_COLUMN, boardObject, liveBoardText } from './board-answer.ts'
import { listJson, writeAccounts, writeContacts, writeStages, writeTags, written } from './list-answer.ts'
import { dealsAsOf, pipelineAsOf, withDealsTable } from './board-as-of.ts'
import { viewerOf } from '../kernel/auth.ts'
import { isUuid, tagRefs } from '../kernel/relations.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { Board, BoardQuery, DealList, DealListQuery } from './schemas.ts'
import type { DealFilterQuery } from './schemas.ts'
import { contactBody, recordBody } from '../kernel/schemas/records.ts'
import { callerOf } from '../kernel/commands.ts'

const TAGS = ['opportunities']

const BOARD_DESCRIPTION = [
  'Every list filter applies, with the same visibility. `next_activity` is null until activities exist.',
  '`as_of=<ISO instant>` answers the board as it stood then: the columns of the pipeline then, and every deal that existed then folded from its events (fields, stage, order, assignees, tags and line items then), under the same filters and visibility, judged on the deal as it was; stage thresholds and the names of related records are current.',
  'Replaying is bounded by AS_OF_EVENT_BUDGET events (default 20,000): past it the answer is 400, never a partial board.',
].join(' ')

/** The query string as the shared filter: one mapping, so list, totals and board read it identically. */
function dealFilter(query: z.infer<typeof DealFilterQuery>, pipeline: string[] | undefined, definitions: readonly Definition[]): DealFilter {
  // cf_<key> filters: a repeated key takes its last value, a blank one is no filter.
  const cf = Object.entries(query).flatMap(([key, value]) => {
    const last = Array.isArray(value) ? value.at(-1) : value
    return key.startsWith(CF_PREFIX) && typeof last === 'string' && last.trim() !== '' ? [[key.slice(CF_PREFIX.length), last.trim()] as const] : []
  })
  const customFields = cf.length ? customFieldFilter(definitions, Object.fromEntries(cf)) : undefined
  const isTrue = (v: unknown) => typeof v === 'string' && /^(true|1)$/i.test(v.trim())
  return {
    name: query.name,
    search: query.search,
    account: query.account,
    stage: query.stage,
    leadSource: query.lead_source,
    tags: query.tags,
    assignedTo: query.assigned_to,
    createdFrom: query.created_at__gte,
    createdTo: query.created_at__lte,
    closedFrom: query.closed_on__gte,
    closedTo: query.closed_on__lte,
    amountFrom: query.amount__gte,
    amountTo: query.amount__lte,
    pipeline,
    open: isTrue(query.open),
    rotten: isTrue(query.rotten),
    customFields,
  }
}

/**
 * What a list answer is made of, whose stamps (stamped-cache.ts) key what it keeps: its totals and
 * pick lists by the read models they read, the whole answer by all of them: the page's deals show
 * their teams and members (IDENTITY) too.
 */
const LIST_SOURCES = ['opportunities', 'accounts', 'contacts', 'tags', 'pipelines']
const ANSWER_SOURCES = [...LIST_SOURCES, 'teams', IDENTITY]
/** Filtered sets (a few hundred bytes each) and organizations' pick lists kept per process; a pick list bigger than KEPT_LIST_BYTES is loaded every time, so they hold 100 MB at most (a few kB each in practice). */
const KEPT_SETS = 500
const KEPT_ORGS = 400
const KEPT_LIST_BYTES = 256 * 1024
/** Whole answers kept as their bytes, lists and boards apart, 32 MB at most each (a list at 100k deals is ~70 kB, a board of 600 cards ~530 kB); bigger ones are built every time. */
const KEPT_LISTS = { entries: 128, bytes: 256 * 1024 }
const KEPT_BOARDS = { entries: 32, bytes: 1024 * 1024 }
/** The read models a live board is made of, and the identity tables (its cards' assignees). */
const BOARD_SOURCES = ['opportunities', 'accounts', 'tags', 'pipelines', IDENTITY]

/** The deal list with totals (§4.3) and the kanban board (§4.6): plain indexed SQL over the deals read model. */
export function opportunityListRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const lookups = lookupsOf(deps)
  const activeFields = async (orgId: string) => (await lookups.customFields(orgId, 'opportunities')).filter((d) => d.is_active)
  // What list answers repeat between writes: a filtered set's stage codes and totals, an organization's pick lists.
  const sets = stampedCache(KEPT_SETS)
  // In tests every list answer is checked against the serializer's (list-answer.ts).
  const checked = deps.config.env === 'test'
  const pickLists = stampedCache(KEPT_ORGS)
  // Whole answers (issue 36: at scale each was rebuilt per request, ~5 ms of CPU between Node and PostgreSQL), valid while their sources' stamps stand and the clock shows in none of their texts.
  const lists = stampedCache(KEPT_LISTS.entries)
  const boards = stampedCache(KEPT_BOARDS.entries)
  // Boards' pipelines with their stages (two statements a board otherwise), an organization's few.
  const pipelines = stampedCache(KEPT_ORGS)
  const keptAnswer = (bytes: Buffer, from: Date, until: number, bound: { bytes: number }) => ({ value: bytes, from: from.getTime(), until, keep: bytes.length <= bound.bytes })
  const sendJson = (reply: FastifyReply, bytes: Buffer) => reply.type('application/json; charset=utf-8').send(bytes)
  return async (app) => {
    app.get('/api/opportunities/', { schema: { tags: TAGS, summary: 'Deals with totals over the whole filtered set', description: 'A non-admin sees only deals they created or are assigned to, in rows, counts and totals alike. Malformed filter values match nothing; blank values are no filter. Newest first.', querystring: DealListQuery, response: { 200: DealList, ...authErrors } } }, async (request, reply) => {
      const viewer = viewerOf(request)
      const now = clock()
      const { limit, offset } = request.query
      const [definitions, defaultPipelineId, org, stamps] = await Promise.all([activeFields(viewer.orgId), ensureDefaultPipeline(deps, callerOf(request)), lookups.organization(viewer.orgId), readStamps(db, ANSWER_SOURCES)])
      const filter = dealFilter(request.query, request.query.pipeline, definitions)
      const query = dealQuery(viewer, filter, now)
      const setKey = JSON.stringify([viewer, org.default_currency, filter])
      // Everything else the answer is written from: the page, the organization's name, its default pipeline, the custom fields shown.
      const answerKey = JSON.stringify([setKey, limit, offset, org.name, defaultPipelineId, definitions.map((d) => d.key)])
      // With rotten=true the set moves with the clock: nothing of it is kept.
      const stamp = query.clocked ? undefined : stampsKey(stamps, ANSWER_SOURCES)
      const bytes = await lists.get(answerKey, stamp, now.getTime(), async () => {
        let until = Infinity
        const memo: Memo = async (part, load) => {
          const value = await sets.timed(`${part} ${setKey}`, stamps.get('opportunities'), now.getTime(), load)
          until = Math.min(until, value.until ?? Infinity)
          return value.value
        }
        // Kept as written (list-answer.ts): the pick lists are spliced into the answer as they are.
        const kept = <T>(source: string, key: string, load: () => Promise<T>, write: (value: T) => string) =>
          pickLists.get(`${source} ${viewer.orgId} ${key}`, stamps.get(source), 0, async () => {
            const value = written(await load(), write, checked)
            return { value, keep: value.text.length <= KEPT_LIST_BYTES }
          })
        const [{ count, rows, totals }, accounts, contacts, tags, stages] = await Promise.all([
          listDeals(db, query, { limit, offset }, org.default_currency, memo),
          kept('accounts', '', async () => (await liveAccounts(db, viewer.orgId)).map(recordBody), writeAccounts),
          kept('contacts', '', async () => (await liveContacts(db, viewer.orgId)).map(contactBody), writeContacts),
          kept('tags', '', () => tagRefs(db, viewer.orgId), writeTags),
          kept('pipelines', defaultPipelineId, async () => ((await pipelineOf(db, viewer.orgId, defaultPipelineId))?.stages ?? []).map((s) => [s.code, s.label] as [string, string]), writeStages),
        ])
        const opportunities = await opportunitiesOf(deps, { id: org.id, name: org.name }, rows, now)
        // The page's texts that move with the clock: how long ago each deal was created, its days in stage (and aging).
        for (const row of rows) until = Math.min(until, timeAgoChangesAt(row.created_at, now), daysChangeAt(row.stage_changed_at, now))
        return keptAnswer(await listJson({ count, totals, offset, limit, opportunities, accounts, contacts, tags, stages }, checked), now, until, KEPT_LISTS)
      })
      // Already JSON: sent as it is, past the route's serializer (the reply's type is the untyped one for that).
      return sendJson(reply as FastifyReply, bytes)
    })

    app.get('/api/opportunities/kanban/', { schema: { tags: TAGS, summary: "A pipeline's board: one column per stage, at most 100 cards each", description: BOARD_DESCRIPTION, querystring: BoardQuery, response: { 200: Board, 400: ErrorBody, 404: ErrorBody, ...authErrors } } }, async (request, reply) => {
      const viewer = viewerOf(request)
      const asOf = request.query.as_of
      const now = asOf ?? clock()
      const given = request.query.pipeline?.trim().toLowerCase()
      if (given !== undefined && !isUuid(given)) throw new NotFoundError('Pipeline not found')
      const pipelineId = given ?? (await ensureDefaultPipeline(deps, callerOf(request)))
      // Read before anything that may be kept (stamped-cache.ts); a board as of an instant keeps nothing.
      const stamps = asOf ? undefined : await readStamps(db, BOARD_SOURCES)
      const pipeline = await orNotFound(pipelines.get(`${viewer.orgId} ${pipelineId}`, stamps?.get('pipelines'), 0, async () => ({ value: await pipelineOf(db, viewer.orgId, pipelineId) })))
      const filter = dealFilter(request.query, [pipeline.id], await activeFields(viewer.orgId))
      const query = dealQuery(viewer, filter, now)
      const stages = asOf ? ((await pipelineAsOf(deps.store, pipeline.id, asOf))?.stages ?? []).map((s) => ({ ...s, position: s.order })) : pipeline.stages
      const board = { id: pipeline.id, name: pipeline.name, is_default: pipeline.is_default }
      if (!asOf) {
        const stamp = query.clocked || !stamps ? undefined : stampsKey(stamps, BOARD_SOURCES)
        const bytes = await boards.get(JSON.stringify([viewer, filter, board, stages]), stamp, now.getTime(), async () => {
          const { text, until } = await liveBoardText(deps, viewer, query, board, stages, deps.config.env === 'test')
          return keptAnswer(Buffer.from(text), now, until, KEPT_BOARDS)
        })
        // Already JSON (board-answer.ts): sent as it is, past the route's serializer (the reply's type is the untyped one for that).
        return sendJson(reply as FastifyReply, bytes)
      }
      const then = await dealsAsOf(deps, viewer.orgId, asOf, deps.config.asOfEventBudget)
      const { rows, counts } = await withDealsTable(db, then.rows, (trx, table) => boardDeals(trx, { ...query, rollup: null }, stages.map((s) => s.id), CARDS_PER_COLUMN, table))
      return boardObject(deps, viewer, { pipeline: board, stages, counts }, rows, now, then.lineItems)
    })
  }
}
