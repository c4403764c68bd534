/**
 * The row types of a module's note tables, `<module>_comments` and `<module>_attachments`
 * (projections/kernel/notes.ts creates and keeps them): here, apart from the code, so a module's
 * tables.ts names them without importing the notes' queries.
 */
export type NoteCommentRow = { id: string; owner_id: string; org_id: string; comment: string; created_by: string | null; is_deleted: boolean; created_at: Date; updated_at: Date }
export type NoteAttachmentRow = { id: string; owner_id: string; org_id: string; file_name: string; content_type: string; size: number; storage_key: string; created_by: string | null; is_deleted: boolean; created_at: Date }

/** The two note tables of the module named `M`, as a module's tables.ts adds them to the Database type. */
export type NoteTablesOf<M extends string> = { [T in `${M}_comments`]: NoteCommentRow } & { [T in `${M}_attachments`]: NoteAttachmentRow }
