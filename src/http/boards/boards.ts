import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { DEFAULT_COLUMN_COLOR } from '../../commands/board/board.ts'
import { addCard, addColumn, changeCard, createBoard, deleteBoard, removeCard, updateBoard } from '../../commands/board/board-writes.ts'
import type { BoardChanges } from '../../commands/board/board-writes.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { boardOf, boardOfColumn, cardsOf, listBoards } from '../../projections/board/queries.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { pageLinks } from '../kernel/page-links.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { Board, BoardCreateBody, BoardList, BoardPkParams, BoardQuery, BoardUpdateBody, Card, CardCreateBody, CardUpdateBody, ColumnBody, ColumnPkParams, ColumnWithCards } from './schemas.ts'
import { boardListViews, boardView, cardViews, columnsWithCards } from './views.ts'

const TAGS = ['boards']
const NoContent = z.null().describe('No content')
const readErrors = { ...authErrors, 404: ErrorBody } as const
const writeErrors = { 400: ErrorBody, ...readErrors } as const
const isTrue = (value: string) => ['true', '1', 'yes'].includes(value.toLowerCase())

/**
 * Kanban boards (issue 19; the original's /api/boards/ routes): bare-data answers, the standard
 * `{count, next, previous, results}` list. A board's members (the owner is one) and the
 * organization's admins see it; to anyone else it is a 404. Members work the cards; the owner and
 * board admins (and organization admins) edit the board and add columns; deleting is the owner's.
 */
export function boardRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const visible = (request: FastifyRequest, id: string) => {
    const caller = callerOf(request)
    return orNotFound(boardOf(db, caller.orgId, caller, id))
  }
  const answerBoard = async (request: FastifyRequest, id: string) => boardView(db, callerOf(request).orgId, await visible(request, id))
  const answerCard = async (request: FastifyRequest, boardId: string, cardId: string) => {
    const [card] = await cardViews(db, callerOf(request).orgId, await cardsOf(db, boardId, { cardId }), clock())
    if (!card) throw new NotFoundError()
    return card
  }
  const settled = (reply: FastifyReply, position: Position | null) => settle(deps, reply, position)
  const changesOf = (body: z.infer<typeof BoardUpdateBody>): BoardChanges => ({ name: body.name, description: body.description, isArchived: body.is_archived, members: body.members })

  return async (app) => {
    app.get('/api/boards/', { schema: { tags: TAGS, summary: 'The boards the caller is on (every board for an organization admin), newest first', querystring: BoardQuery, response: { 200: BoardList, ...authErrors } } }, async (request) => {
      const caller = callerOf(request)
      const { limit, offset, archived, search } = request.query
      const { count, rows } = await listBoards(db, caller.orgId, caller, { limit, offset, search, archived: archived === undefined ? undefined : isTrue(archived) })
      return { count, ...pageLinks(request, { count, limit, offset }), results: await boardListViews(db, caller.orgId, rows) }
    })

    app.post('/api/boards/', { schema: { tags: TAGS, summary: 'Create a board owned by the caller, with the default columns unless create_default_columns is false; answers 201', body: BoardCreateBody, response: { 201: Board, ...writeErrors } } }, async (request, reply) => {
      const body = request.body
      const { id, position } = await createBoard(deps, callerOf(request), { name: body.name, description: body.description ?? null, isArchived: body.is_archived ?? false, defaultColumns: body.create_default_columns ?? true })
      await settled(reply, position)
      return reply.code(201).send(await answerBoard(request, id))
    })

    app.get('/api/boards/:id/', { schema: { tags: TAGS, summary: 'A board with its columns (without cards) and members', params: IdParams, response: { 200: Board, ...readErrors } } }, async (request) => answerBoard(request, request.params.id))

    for (const method of ['put', 'patch'] as const) {
      app[method]('/api/boards/:id/', { schema: { tags: TAGS, summary: 'Edit a board: name, description, archived, members (its owner or a board admin); only the fields sent change', params: IdParams, body: BoardUpdateBody, response: { 200: Board, ...writeErrors } } }, async (request, reply) => {
        const { position } = await updateBoard(deps, callerOf(request), request.params.id, changesOf(request.body))
        await settled(reply, position)
        return answerBoard(request, request.params.id)
      })
    }

    app.delete('/api/boards/:id/', { schema: { tags: TAGS, summary: 'Delete a board with its columns and cards (its owner); answers 204', params: IdParams, response: { 204: NoContent, ...readErrors } } }, async (request, reply) => {
      await settled(reply, (await deleteBoard(deps, callerOf(request), request.params.id)).position)
      return reply.code(204).send(null)
    })

    app.get('/api/boards/:board_pk/columns/', { schema: { tags: TAGS, summary: "A board's columns in order, each with its cards in order (what the board page reads)", params: BoardPkParams, response: { 200: z.array(ColumnWithCards), ...readErrors } } }, async (request) => {
      const board = await visible(request, request.params.board_pk)
      return columnsWithCards(db, callerOf(request).orgId, board.id, clock())
    })

    app.post('/api/boards/:board_pk/columns/', { schema: { tags: TAGS, summary: "Add a column to a board (its owner or a board admin); names are unique on the board; answers 201", params: BoardPkParams, body: ColumnBody, response: { 201: ColumnWithCards, ...writeErrors } } }, async (request, reply) => {
      const { name, order, color, limit } = request.body
      const { columnId, position } = await addColumn(deps, callerOf(request), request.params.board_pk, { name, order: order ?? null, color: color ?? DEFAULT_COLUMN_COLOR, limit: limit ?? null })
      await settled(reply, position)
      const column = (await columnsWithCards(db, callerOf(request).orgId, request.params.board_pk, clock())).find((c) => c.id === columnId)
      if (!column) throw new NotFoundError()
      return reply.code(201).send(column)
    })

    const columnBoard = async (request: FastifyRequest, columnId: string) => (await visible(request, (await orNotFound(boardOfColumn(db, callerOf(request).orgId, columnId))).board_id)).id

    app.get('/api/boards/columns/:column_pk/tasks/', { schema: { tags: TAGS, summary: "A column's cards in order", params: ColumnPkParams, response: { 200: z.array(Card), ...readErrors } } }, async (request) => {
      const boardId = await columnBoard(request, request.params.column_pk)
      return cardViews(db, callerOf(request).orgId, await cardsOf(db, boardId, { columnId: request.params.column_pk }), clock())
    })

    app.post('/api/boards/columns/:column_pk/tasks/', { schema: { tags: TAGS, summary: 'Add a card to a column (any board member); at its end unless `order` is given; answers 201', params: ColumnPkParams, body: CardCreateBody, response: { 201: Card, ...writeErrors } } }, async (request, reply) => {
      const { title, description, priority, due_date, assigned_to_ids, order } = request.body
      const content = { title, description: description ?? null, priority: priority ?? 'medium', due_date: due_date ?? null, assigned_to: [...(assigned_to_ids ?? [])].sort() }
      const { boardId, cardId, position } = await addCard(deps, callerOf(request), request.params.column_pk, { content, index: order ?? null })
      await settled(reply, position)
      return reply.code(201).send(await answerCard(request, boardId, cardId))
    })

    app.put('/api/boards/tasks/:id/', { schema: { tags: TAGS, summary: 'Edit a card and/or move it to another column of its board or another place in its column (any board member)', params: IdParams, body: CardUpdateBody, response: { 200: Card, ...writeErrors } } }, async (request, reply) => {
      const { column, order, is_completed, assigned_to_ids, ...content } = request.body
      const changes = { ...content, ...(assigned_to_ids !== undefined && { assigned_to: assigned_to_ids }), ...(is_completed !== undefined && { completed: is_completed }) }
      const { boardId, position } = await changeCard(deps, callerOf(request), request.params.id, { placement: { columnId: column, index: order }, changes })
      await settled(reply, position)
      return answerCard(request, boardId, request.params.id)
    })

    app.delete('/api/boards/tasks/:id/', { schema: { tags: TAGS, summary: 'Delete a card (any board member); answers 204', params: IdParams, response: { 204: NoContent, ...readErrors } } }, async (request, reply) => {
      await settled(reply, (await removeCard(deps, callerOf(request), request.params.id)).position)
      return reply.code(204).send(null)
    })
  }
}
