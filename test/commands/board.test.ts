import t from 'tap'
import { boardDecider, decideBoard } from '../../src/commands/board/board.ts'
import type { BoardCommand, BoardEvent, BoardState } from '../../src/commands/board/board.ts'
import { cardsOfColumn } from '../../src/commands/board/card-placement.ts'
import { fold } from '../../src/commands/decider.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = 'org-a'
const at = '2026-11-22T09:00:00.000Z'
const owner = { profileId: 'p-owner', isAdmin: false }
const member = { profileId: 'p-member', isAdmin: false }
const boardAdmin = { profileId: 'p-board-admin', isAdmin: false }
const stranger = { profileId: 'p-stranger', isAdmin: false }
const orgAdmin = { profileId: 'p-org-admin', isAdmin: true }
const column = (column_id: string, name: string, order: number) => ({ column_id, name, order, color: '#6B7280', limit: null })
const content = (title: string) => ({ title, description: null, priority: 'medium' as const, due_date: null, assigned_to: [] })

const created: BoardEvent = { type: 'BoardCreated', data: { board_id: 'b1', org_id: org, name: 'Launch', description: null, is_archived: false, owner_id: owner.profileId, columns: [column('todo', 'To Do', 1), column('done', 'Done', 2)], at } }
const members: BoardEvent = { type: 'BoardMembersChanged', data: { members: [{ profile_id: boardAdmin.profileId, role: 'admin' }, { profile_id: member.profileId, role: 'member' }], at } }
const card = (card_id: string, column_id: string, rank: number): BoardEvent => ({ type: 'BoardCardAdded', data: { card_id, column_id, rank, content: content(card_id), created_by: owner.profileId, at } })
const board = [created, members, card('c1', 'todo', 1000), card('c2', 'todo', 2000), card('c3', 'todo', 3000)]
const base = (actor = owner) => ({ orgId: org, actor, at })
const move = (cardId: string, placement: { columnId?: string; index?: number }, actor = member): BoardCommand => ({ type: 'ChangeCard', ...base(actor), cardId, placement, changes: {} })
const orderOf = (state: BoardState, columnId: string) => cardsOfColumn(state, columnId).map((c) => c.id)

t.test('create, edit, archive, members', async (t) => {
  const b = spec(t, boardDecider)
  const create: BoardCommand = { type: 'CreateBoard', ...base(), boardId: 'b1', name: 'Launch', description: null, isArchived: false, columns: [column('todo', 'To Do', 1), column('done', 'Done', 2)] }
  b.given([]).when(create).then([created])
  b.given([created]).when(create).then([], 'creating again is a no-op')
  b.given(board).when({ type: 'UpdateBoard', ...base(boardAdmin), name: 'Launch v2', isArchived: true }).then([{ type: 'BoardUpdated', data: { name: 'Launch v2', is_archived: true, at } }], 'a board admin renames and archives')
  b.given(board).when({ type: 'UpdateBoard', ...base(), name: 'Launch', isArchived: false }).then([], 'nothing changed, no event')
  b.given(board).when({ type: 'UpdateBoard', ...base(member), name: 'Mine' }).thenRejects(ForbiddenError)
  b.given(board).when({ type: 'UpdateBoard', ...base(stranger), name: 'Mine' }).thenRejects(NotFoundError, { message: 'Not found' })
  b.given(board).when({ type: 'UpdateBoard', ...base(orgAdmin), description: 'Run by ops' }).then([{ type: 'BoardUpdated', data: { description: 'Run by ops', at } }], 'an organization admin acts as an owner')
  b.given(board).when({ type: 'UpdateBoard', ...base(owner), orgId: 'org-b', name: 'X' }).thenRejects(NotFoundError)
  b.given(board)
    .when({ type: 'UpdateBoard', ...base(), members: [{ profile_id: member.profileId, role: 'member' }, { profile_id: owner.profileId, role: 'member' }, { profile_id: boardAdmin.profileId, role: 'admin' }] })
    .then([], 'the same set in another order, the owner ignored: no event')
  b.given(board).when({ type: 'UpdateBoard', ...base(), members: [{ profile_id: member.profileId, role: 'admin' }] }).then([{ type: 'BoardMembersChanged', data: { members: [{ profile_id: member.profileId, role: 'admin' }], at } }])
})

t.test('delete: the owner (or an organization admin) only, once', async (t) => {
  const b = spec(t, boardDecider)
  const deleted: BoardEvent = { type: 'BoardDeleted', data: { at } }
  b.given(board).when({ type: 'DeleteBoard', ...base() }).then([deleted])
  b.given(board).when({ type: 'DeleteBoard', ...base(orgAdmin) }).then([deleted])
  b.given(board).when({ type: 'DeleteBoard', ...base(boardAdmin) }).thenRejects(ForbiddenError, { message: 'Only the board owner can delete the board' })
  b.given([...board, deleted]).when({ type: 'DeleteBoard', ...base() }).then([], 'deleting twice: nothing more')
  b.given([...board, deleted]).when({ type: 'AddCard', ...base(), cardId: 'c9', columnId: 'todo', index: null, content: content('x') }).thenRejects(NotFoundError)
})

t.test('columns: board owner or admin; unique names; appended after the last by default', async (t) => {
  const b = spec(t, boardDecider)
  const add = (name: string, order: number | null, actor = owner): BoardCommand => ({ type: 'AddColumn', ...base(actor), column: { column_id: 'col-new', name, order, color: '#000000', limit: 3 } })
  b.given(board).when(add('Review', null)).then([{ type: 'BoardColumnAdded', data: { column: { column_id: 'col-new', name: 'Review', order: 3, color: '#000000', limit: 3 }, at } }])
  b.given(board).when(add('Review', 0, boardAdmin)).then([{ type: 'BoardColumnAdded', data: { column: { column_id: 'col-new', name: 'Review', order: 0, color: '#000000', limit: 3 }, at } }])
  b.given(board).when(add('Done', null)).thenRejects(ValidationError, { errors: { name: ['A column with this name already exists on this board.'] } })
  b.given(board).when(add('Review', null, member)).thenRejects(ForbiddenError)
})

t.test('cards: added at the end or at an index, by any member; edited; completed; removed', async (t) => {
  const b = spec(t, boardDecider)
  const add = (index: number | null, actor = member): BoardCommand => ({ type: 'AddCard', ...base(actor), cardId: 'c4', columnId: 'todo', index, content: content('c4') })
  const added = (rank: number): BoardEvent => ({ type: 'BoardCardAdded', data: { card_id: 'c4', column_id: 'todo', rank, content: content('c4'), created_by: member.profileId, at } })
  b.given(board).when(add(null)).then([added(4000)], 'at the end: a step after the last')
  b.given(board).when(add(0)).then([added(0)], 'first: a step before the first')
  b.given(board).when(add(1)).then([added(1500)], 'between two: midway')
  b.given(board).when(add(null, stranger)).thenRejects(NotFoundError)
  b.given(board).when({ ...add(null), columnId: 'elsewhere' } as BoardCommand).thenRejects(ValidationError)
  const edit = (changes: object): BoardCommand => ({ type: 'ChangeCard', ...base(member), cardId: 'c1', placement: {}, changes })
  b.given(board).when(edit({ title: 'c1', priority: 'medium' })).then([], 'same values: no event')
  b.given(board).when(edit({ title: 'Ship it', assigned_to: ['p2', 'p1'], due_date: at })).then([{ type: 'BoardCardChanged', data: { card_id: 'c1', changes: { title: 'Ship it', due_date: at, assigned_to: ['p1', 'p2'] }, at } }])
  b.given(board).when(edit({ completed: true })).then([{ type: 'BoardCardChanged', data: { card_id: 'c1', changes: { completed_at: at }, at } }])
  b.given(board).when(edit({ completed: false })).then([], 'reopening an open card: nothing')
  b.given(board).when({ type: 'RemoveCard', ...base(member), cardId: 'c2' }).then([{ type: 'BoardCardRemoved', data: { card_id: 'c2', at } }])
  b.given(board).when({ type: 'RemoveCard', ...base(member), cardId: 'gone' }).then([], 'removing a missing card: nothing')
  b.given(board).when({ type: 'ChangeCard', ...base(member), cardId: 'gone', placement: {}, changes: { title: 'x' } }).thenRejects(NotFoundError)
})

t.test('moves: within a column, to another column (one event on the board stream), the same place is no move', async (t) => {
  const b = spec(t, boardDecider)
  const moved = (card_id: string, column_id: string, rank: number): BoardEvent => ({ type: 'BoardCardMoved', data: { card_id, column_id, rank, at } })
  b.given(board).when(move('c3', { index: 0 })).then([moved('c3', 'todo', 0)])
  b.given(board).when(move('c1', { index: 2 })).then([moved('c1', 'todo', 4000)], 'to the end of its own column')
  b.given(board).when(move('c1', { index: 1 })).then([moved('c1', 'todo', 2500)], 'between c2 and c3')
  b.given(board).when(move('c2', { index: 1 })).then([], 'the same index')
  b.given(board).when(move('c2', { columnId: 'todo' })).then([], 'the same column, no index')
  b.given(board).when(move('c2', { columnId: 'done' })).then([moved('c2', 'done', 1000)], 'into an empty column')
  b.given(board).when(move('c2', { columnId: 'nope' })).thenRejects(ValidationError, { errors: { column: ['Invalid column for this board.'] } })
  b.given(board).when(move('c2', { index: 99 })).then([moved('c2', 'todo', 4000)], 'an index past the end is the end')
  b.given(board).when(move('c2', { index: 0 }, stranger)).thenRejects(NotFoundError)
})

t.test('order stays exact over many random moves, and a gap that runs out renumbers the column', async (t) => {
  const columns = ['todo', 'done']
  let history: BoardEvent[] = [...board]
  // The model: plain arrays moved by index, as a client's drag does.
  const model: Record<string, string[]> = { todo: ['c1', 'c2', 'c3'], done: [] }
  let seed = 7
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
  let renumbers = 0
  const drop = (cardId: string, to: string, index: number) => {
    const events = decideBoard(move(cardId, { columnId: to, index }), fold(boardDecider, history))
    renumbers += events.filter((e) => e.type === 'BoardCardsRanked').length
    history = [...history, ...events]
    const source = columns.find((c) => model[c]!.includes(cardId))!
    model[source] = model[source]!.filter((id) => id !== cardId)
    model[to]!.splice(Math.min(index, model[to]!.length), 0, cardId)
  }
  for (let i = 0; i < 200; i++) {
    const all = [...model.todo!, ...model.done!]
    const to = columns[random(2)]!
    drop(all[random(all.length)]!, to, random(model[to]!.length + 2))
  }
  // Adversarial: the last card of a column dropped into slot 1, again and again, halves the same gap.
  const todo = () => model.todo!
  while (todo().length < 3) drop(model.done![0]!, 'todo', 0)
  for (let i = 0; i < 80; i++) drop(todo()[todo().length - 1]!, 'todo', 1)
  const state = fold(boardDecider, history)
  t.same(orderOf(state, 'todo'), model.todo, 'To Do in the order the moves made')
  t.same(orderOf(state, 'done'), model.done, 'Done in the order the moves made')
  t.ok(renumbers > 0, `the repeated drops into one slot renumbered a column ${renumbers} time(s)`)
})
