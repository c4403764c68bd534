import { ForbiddenError, NotFoundError } from '../errors.ts'
import type { Actor } from './caller.ts'

/** A stored file as a note event records it (the bytes are in the file store, never in the log). */
export type AttachmentData = { attachment_id: string; file_name: string; content_type: string; size: number; storage_key: string }

/**
 * Comments and attachments of a record, decided on the record's own stream: any module's events
 * are `<Prefix>CommentAdded` … `<Prefix>AttachmentRemoved` (leads: `LeadCommentAdded`). The record's
 * decider folds them with `evolveNotes` and decides the note commands with `decideNote`, after its
 * own existence check. The rules (where-the-spec-is-silent.md): whoever may access the record adds;
 * only the author (uploader) or an admin edits or removes.
 */
export type NoteEvent<P extends string> =
  /** `mentions`: the profiles its `@name`s named when it was written (absent when none); `internal`: a note for the team only (cases), absent on a public comment. */
  | { type: `${P}CommentAdded`; data: { comment_id: string; comment: string; by: string | null; mentions?: string[]; internal?: true; at: string } }
  | { type: `${P}CommentEdited`; data: { comment_id: string; comment: string; at: string } }
  | { type: `${P}CommentDeleted`; data: { comment_id: string; at: string } }
  /** `storage_key` names the file in the file store; the bytes never enter the log. */
  | { type: `${P}AttachmentAdded`; data: AttachmentData & { by: string | null; at: string } }
  | { type: `${P}AttachmentRemoved`; data: { attachment_id: string; at: string } }

/** A new comment's `mentions` field: present only when it names someone, so comments naming no one keep their first shape. */
export const mentionsOf = (command: { mentions?: readonly string[] }): { mentions?: string[] } => (command.mentions?.length ? { mentions: [...command.mentions] } : {})

export type NoteCommand =
  /** `mentions`: whom the comment's `@name`s resolve to in the organization now (commands/notification/mentions.ts); `internal`: a note for the team only (modules whose routes take `is_internal`). */
  | { type: 'AddComment'; orgId: string; actor: Actor; commentId: string; comment: string; mentions?: readonly string[]; internal?: boolean; at: string }
  | { type: 'EditComment'; orgId: string; actor: Actor; commentId: string; comment: string; at: string }
  | { type: 'DeleteComment'; orgId: string; actor: Actor; commentId: string; at: string }
  | { type: 'AddAttachment'; orgId: string; actor: Actor; attachment: AttachmentData; at: string }
  | { type: 'RemoveAttachment'; orgId: string; actor: Actor; attachmentId: string; at: string }

export const NOTE_COMMANDS: readonly NoteCommand['type'][] = ['AddComment', 'EditComment', 'DeleteComment', 'AddAttachment', 'RemoveAttachment']
export const isNoteCommand = (command: { type: string }): command is NoteCommand => (NOTE_COMMANDS as readonly string[]).includes(command.type)

/** What the rules need of a note: its author and whether it is gone (and a comment's text, so an edit to the same text is no change). */
export type Note = { id: string; by: string | null; text?: string; removed: boolean }
export type Notes = { comments: Note[]; attachments: Note[] }
export const noNotes = (): Notes => ({ comments: [], attachments: [] })

const NOTE_SUFFIXES = ['CommentAdded', 'CommentEdited', 'CommentDeleted', 'AttachmentAdded', 'AttachmentRemoved'] as const
/** The stored event types of a module's notes, e.g. for a projector's `eventTypes`. */
export const noteEventTypes = <P extends string>(prefix: P) => NOTE_SUFFIXES.map((suffix) => `${prefix}${suffix}` as NoteEvent<P>['type'])
export const isNoteEvent = <P extends string>(prefix: P, event: { type: string }): event is NoteEvent<P> => NOTE_SUFFIXES.some((suffix) => event.type === `${prefix}${suffix}`)

/** The suffix of a note event, so one switch serves every module (`LeadCommentAdded` → `CommentAdded`). */
const suffixOf = (prefix: string, type: string) => type.slice(prefix.length) as (typeof NOTE_SUFFIXES)[number]

const touch = (list: Note[], id: string, change: Partial<Note>) => list.map((note) => (note.id === id ? { ...note, ...change } : note))

export function evolveNotes<P extends string>(prefix: P, notes: Notes, event: NoteEvent<P>): Notes {
  const data = event.data as Record<string, string>
  switch (suffixOf(prefix, event.type)) {
    case 'CommentAdded':
      return { ...notes, comments: [...notes.comments, { id: data.comment_id!, by: data.by ?? null, text: data.comment, removed: false }] }
    case 'CommentEdited':
      return { ...notes, comments: touch(notes.comments, data.comment_id!, { text: data.comment }) }
    case 'CommentDeleted':
      return { ...notes, comments: touch(notes.comments, data.comment_id!, { removed: true }) }
    case 'AttachmentAdded':
      return { ...notes, attachments: [...notes.attachments, { id: data.attachment_id!, by: data.by ?? null, removed: false }] }
    case 'AttachmentRemoved':
      return { ...notes, attachments: touch(notes.attachments, data.attachment_id!, { removed: true }) }
  }
}

/** A note the actor may change, undefined when already removed (a repeat decides nothing), 404 when unknown, 403 for anyone but its author or an admin. */
function changeable(list: readonly Note[], id: string, actor: Actor, what: 'Comment' | 'Attachment'): Note | undefined {
  const note = list.find((n) => n.id === id)
  if (!note) throw new NotFoundError(`${what} not found`)
  if (note.removed) return undefined
  const author = actor.profileId !== null && note.by === actor.profileId
  if (!actor.isAdmin && !author) throw new ForbiddenError(`Only an admin or its author may change this ${what.toLowerCase()}`)
  return note
}

/**
 * The events of a note command on a record the caller's organization holds (the record's decider
 * checked that). `mayAccess` is the record's own access rule, which adding a note requires.
 */
export function decideNote<P extends string>(prefix: P, notes: Notes, command: NoteCommand, mayAccess: boolean): NoteEvent<P>[] {
  const { actor, at } = command
  const event = (suffix: (typeof NOTE_SUFFIXES)[number], data: object) => [{ type: `${prefix}${suffix}`, data: { ...data, at } } as NoteEvent<P>]
  const adding = command.type === 'AddComment' || command.type === 'AddAttachment'
  if (adding && !mayAccess) throw new ForbiddenError('Only an admin, the creator or an assignee may add notes to this record')
  switch (command.type) {
    case 'AddComment':
      return notes.comments.some((c) => c.id === command.commentId) ? [] : event('CommentAdded', { comment_id: command.commentId, comment: command.comment, by: actor.profileId, ...mentionsOf(command), ...(command.internal && { internal: true }) })
    case 'EditComment': {
      const note = changeable(notes.comments, command.commentId, actor, 'Comment')
      if (!note) throw new NotFoundError('Comment not found')
      return note.text === command.comment ? [] : event('CommentEdited', { comment_id: note.id, comment: command.comment })
    }
    case 'DeleteComment':
      return changeable(notes.comments, command.commentId, actor, 'Comment') ? event('CommentDeleted', { comment_id: command.commentId }) : []
    case 'AddAttachment':
      return notes.attachments.some((a) => a.id === command.attachment.attachment_id) ? [] : event('AttachmentAdded', { ...command.attachment, by: actor.profileId })
    case 'RemoveAttachment':
      return changeable(notes.attachments, command.attachmentId, actor, 'Attachment') ? event('AttachmentRemoved', { attachment_id: command.attachmentId }) : []
  }
}
