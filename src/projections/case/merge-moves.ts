import { sql } from 'kysely'
import type { CaseMergeEvent, Watch } from '../../commands/case/merge.ts'
import type { Db } from '../../db/database.ts'
import { noteTables } from '../kernel/notes.ts'

/**
 * What a merge and an unmerge move in the cases read model (commands/case/merge.ts): comments,
 * attachments and internal-note flags change owner by id (their rows, edits and removals kept), and
 * watcher rows move with how and since when they watched. Every statement sets values, so applying
 * an event twice changes nothing.
 */
const NOTES = noteTables('case')

/** The row's watchers list (the visibility predicate reads it) from its watcher rows, first subscriber first. */
export async function refreshWatchers(db: Db, id: string): Promise<void> {
  await sql`UPDATE cases SET watchers = COALESCE((SELECT array_agg(profile_id ORDER BY created_at, profile_id) FROM case_watchers WHERE case_id = ${id}), '{}') WHERE id = ${id}`.execute(db)
}

async function moveNotes(db: Db, to: string, commentIds: readonly string[], attachmentIds: readonly string[]): Promise<void> {
  if (commentIds.length) {
    await db.updateTable(NOTES.comments).set({ owner_id: to }).where('id', 'in', commentIds).execute()
    await db.updateTable('case_internal_notes').set({ case_id: to }).where('comment_id', 'in', commentIds).execute()
  }
  if (attachmentIds.length) await db.updateTable(NOTES.attachments).set({ owner_id: to }).where('id', 'in', attachmentIds).execute()
}

/** Watchers onto a case as they watched; one already watching it keeps its own row. */
async function addWatchers(db: Db, caseId: string, watchers: readonly Watch[]): Promise<void> {
  const owner = await db.selectFrom('cases').select('org_id').where('id', '=', caseId).executeTakeFirst()
  if (!owner || !watchers.length) return
  const rows = watchers.map((w) => ({ case_id: caseId, profile_id: w.profile_id, org_id: owner.org_id, subscribed_via: w.subscribed_via, created_at: new Date(w.since) }))
  await db.insertInto('case_watchers').values(rows).onConflict((oc) => oc.columns(['case_id', 'profile_id']).doNothing()).execute()
  await refreshWatchers(db, caseId)
}

export async function applyMergeMove(db: Db, id: string, event: CaseMergeEvent): Promise<void> {
  switch (event.type) {
    case 'CaseMerged': {
      const { into_case_id, comment_ids, attachment_ids, watchers } = event.data
      await moveNotes(db, into_case_id, comment_ids, attachment_ids)
      await addWatchers(db, into_case_id, watchers)
      await db.deleteFrom('case_watchers').where('case_id', '=', id).execute()
      await refreshWatchers(db, id)
      return
    }
    case 'CaseUnmerged': {
      const { comments, attachments, watchers } = event.data
      await moveNotes(db, id, comments.map((n) => n.id), attachments.map((n) => n.id))
      await addWatchers(db, id, watchers)
      return
    }
    case 'CaseDuplicateReleased': {
      const { watchers } = event.data
      if (watchers.length) await db.deleteFrom('case_watchers').where('case_id', '=', id).where('profile_id', 'in', watchers).execute()
      await refreshWatchers(db, id)
      return
    }
    case 'CaseDuplicateAbsorbed':
      // Its duplicate's CaseMerged, appended with it, moves the rows.
      return
  }
}
