import type { TaskFields } from '../../commands/task/fields.ts'
import type { NoteTablesOf } from '../kernel/note-tables.ts'

/**
 * The tasks read model: one row per task (deleted ones kept, flagged), its place on the task board
 * (commands/task/move.ts: null pipeline and stage on the status board; `kanban_order` the creation
 * time in ms until a move sets it), and its comments and attachments (projections/kernel/notes.ts).
 */
export type TaskRow = TaskFields & {
  id: string
  org_id: string
  created_by: string | null
  is_deleted: boolean
  created_at: Date
  updated_at: Date
  pipeline_id: string | null
  stage_id: string | null
  stage: string | null
  kanban_order: number
}

export type TaskTables = { tasks: TaskRow } & NoteTablesOf<'task'>

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends TaskTables {}
}
