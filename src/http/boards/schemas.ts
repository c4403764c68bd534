import { z } from 'zod'
import { BOARD_ROLES, CARD_PRIORITIES, DEFAULT_COLUMN_COLOR } from '../../commands/board/board.ts'
import { IdList, ProfileRef, optionalText } from '../kernel/relations.ts'
import { formBoolean, formList, formNumber } from '../kernel/schemas/form-values.ts'

/** Boards, columns and cards as the original answers them (its BoardSerializer, BoardColumnSerializer, BoardTaskSerializer) and its web app reads them. */

const count = z.number().int()
const position = formNumber(z.number().int().min(0))
const Hex = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'Expected a colour like #6B7280')
/** A due date: an ISO date-time, or a day (midnight UTC); blank is none. */
const DueDate = z.preprocess(
  (v) => (v === '' ? null : v),
  z
    .union([z.iso.datetime({ offset: true }), z.iso.date()])
    .transform((value) => new Date(value).toISOString())
    .nullable(),
)

export const BoardCreateBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(255),
  description: optionalText(20_000),
  is_archived: formBoolean(z.boolean()).optional().describe('Default false'),
  create_default_columns: formBoolean(z.boolean()).optional().describe('Default true: the board starts with To Do, In Progress and Done'),
})

const Membership = z.object({ profile_id: z.uuid(), role: z.enum(BOARD_ROLES).exclude(['owner']).default('member') })
export const BoardUpdateBody = BoardCreateBody.omit({ create_default_columns: true })
  .partial()
  .extend({
    members: formList(z.array(Membership)).optional().describe('The whole member set besides the owner (active profiles of this organization; in form bodies a JSON array); a board admin may edit the board and add columns, a member works its cards'),
  })

export const ColumnBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(100).describe('Unique on the board'),
  order: position.optional().describe('Columns sort by it; default: after the last column'),
  color: Hex.optional().describe(`Default ${DEFAULT_COLUMN_COLOR}`),
  limit: formNumber(z.number().int().min(0)).nullable().optional().describe('Work-in-progress limit (shown, not enforced)'),
})

const cardFields = {
  title: z.string().trim().min(1, 'This field may not be blank.').max(255),
  description: optionalText(20_000),
  priority: z.enum(CARD_PRIORITIES).optional().describe('Default medium'),
  due_date: DueDate.optional(),
  assigned_to_ids: IdList('active profiles').optional(),
  order: position.optional().describe('0-based index in the column to place the card at; default: its end'),
}
export const CardCreateBody = z.object(cardFields)
export const CardUpdateBody = z.object({
  ...cardFields,
  title: cardFields.title.optional(),
  column: z.uuid().optional().describe('Move the card to this column of the same board (400 for any other); it keeps its index there unless `order` is given'),
  order: position.optional().describe('0-based index in the (new) column; the other cards keep their relative order'),
  is_completed: formBoolean(z.boolean()).optional().describe('Marks the card done (completed_at is set to now) or open again'),
})

export const BoardQuery = z.object({
  limit: z.coerce.number().int().min(0).default(10),
  offset: z.coerce.number().int().min(0).default(0),
  archived: z.string().optional().describe('`true`, `1` or `yes` (any case): archived boards only; any other value: boards not archived'),
  search: z.string().optional().describe('Names containing this, any case'),
})
export const BoardPkParams = z.object({ board_pk: z.uuid() })
export const ColumnPkParams = z.object({ column_pk: z.uuid() })

export const Card = z.object({
  id: z.uuid(),
  title: z.string(),
  description: z.string().nullable(),
  order: count.describe('0-based index in its column'),
  priority: z.enum(CARD_PRIORITIES),
  due_date: z.string().nullable(),
  completed_at: z.string().nullable(),
  is_completed: z.boolean(),
  is_overdue: z.boolean().describe('Due before now and not completed'),
  assigned_to: z.array(ProfileRef),
  column: z.uuid(),
  board: z.uuid(),
  created_by: z.uuid().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
})

export const Column = z.object({
  id: z.uuid(),
  board: z.uuid(),
  name: z.string(),
  order: count,
  color: z.string(),
  limit: count.nullable(),
  task_count: count,
  created_at: z.string(),
})
export const ColumnWithCards = Column.extend({ tasks: z.array(Card).describe('In their order') })

const MyRole = z.enum(BOARD_ROLES).nullable().describe("The caller's role on the board; `admin` for an organization admin who is not a member")
export const BoardListed = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  owner: ProfileRef.nullable().describe('Null for a board created with the organization API key'),
  is_archived: z.boolean(),
  member_count: count,
  column_count: count,
  task_count: count,
  my_role: MyRole,
  created_at: z.string(),
  updated_at: z.string(),
})
export const Board = BoardListed.extend({
  columns: z.array(Column).describe('In their order'),
  members: z.array(z.object({ profile: ProfileRef, role: z.enum(BOARD_ROLES) })).describe('The owner first'),
})
export const BoardList = z.object({
  count,
  next: z.string().nullable().describe('URL of the next page, or null on the last'),
  previous: z.string().nullable().describe('URL of the previous page, or null on the first'),
  results: z.array(BoardListed),
})
