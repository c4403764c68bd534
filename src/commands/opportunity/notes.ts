import { ForbiddenError, NotFoundError } from '../../errors.ts'
import { existing } from './opportunity.ts'
import type { Authored, Of, OpportunityEvent, OpportunityState } from './opportunity.ts'
import { assertMayAccess } from './rules.ts'
import type { Actor } from '../caller.ts'
import { mentionsOf } from '../notes.ts'

/**
 * A deal's comments and attachments (where-the-spec-is-silent.md, Comments and attachments):
 * anyone who may edit the deal adds them; only their author (uploader) or an admin changes them.
 * Events on the deal's own stream, so they are part of its history.
 */

/** A comment or attachment of the deal, changed only by its author (uploader) or an admin. */
function ownItem(items: readonly Authored[], id: string, actor: Actor, what: string): Authored | undefined {
  const item = items.find((i) => i.id === id)
  if (!item) throw new NotFoundError(`${what} not found`)
  if (item.removed) return undefined
  if (!actor.isAdmin && (actor.profileId === null || item.by !== actor.profileId)) throw new ForbiddenError(`Only an admin or its author may change this ${what.toLowerCase()}`)
  return item
}

export function decideNotes(command: Of<'AddComment' | 'EditComment' | 'DeleteComment' | 'AddAttachment' | 'RemoveAttachment'>, state: OpportunityState): OpportunityEvent[] {
  existing(state, command.orgId)
  const { actor, at } = command
  switch (command.type) {
    case 'AddComment':
      assertMayAccess(state, actor)
      if (state.comments.some((c) => c.id === command.commentId)) return []
      return [{ type: 'OpportunityCommentAdded', data: { comment_id: command.commentId, comment: command.comment, by: actor.profileId, ...mentionsOf(command), at } }]
    case 'EditComment': {
      const comment = ownItem(state.comments, command.commentId, actor, 'Comment')
      if (!comment) throw new NotFoundError('Comment not found')
      return comment.comment === command.comment ? [] : [{ type: 'OpportunityCommentEdited', data: { comment_id: comment.id, comment: command.comment, at } }]
    }
    case 'DeleteComment':
      return ownItem(state.comments, command.commentId, actor, 'Comment') ? [{ type: 'OpportunityCommentDeleted', data: { comment_id: command.commentId, at } }] : []
    case 'AddAttachment':
      assertMayAccess(state, actor)
      if (state.attachments.some((a) => a.id === command.attachment.attachment_id)) return []
      return [{ type: 'OpportunityAttachmentAdded', data: { ...command.attachment, by: actor.profileId, at } }]
    case 'RemoveAttachment':
      return ownItem(state.attachments, command.attachmentId, actor, 'Attachment') ? [{ type: 'OpportunityAttachmentRemoved', data: { attachment_id: command.attachmentId, at } }] : []
  }
}

