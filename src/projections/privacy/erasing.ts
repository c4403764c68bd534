import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import { READ_MODEL_ERASED, presentErased } from '../../privacy/seal.ts'
import { applyEvents } from '../kernel/apply.ts'
import type { Projector } from '../kernel/projector.ts'

/** The erasure event (commands/privacy/erasure.ts), as every read model holding personal data handles it. */
export const SUBJECT_ERASED = 'SubjectErased'

/**
 * Who was erased: a person's kind (their stream category, `contact`), id and organization, and the
 * personal fields their own events held (the receipt's `fields`: names, never values).
 */
export type ErasedSubject = { kind: string; id: string; orgId: string; fields: readonly string[] }

/**
 * Blanks or deletes, in one read model's tables, what they hold of the person: the same rows a
 * rebuild makes from the person's events once their key is gone (their fields read as
 * READ_MODEL_ERASED), so live equals rebuilt. Runs inside the page's transaction.
 */
export type SubjectEraser = (trx: Db, subject: ErasedSubject) => Promise<void>

/** A read model that handles erasures: what the conformance test asks of every one that can hold a personal field. */
export type ErasingProjector = Projector & { readonly eraseSubject: SubjectEraser }

export const erasesSubjects = (projector: Projector): projector is ErasingProjector => typeof (projector as Partial<ErasingProjector>).eraseSubject === 'function'

/** A read model declared to hold no personal field (`holdsNoPersonalData`), with the reason. */
export type HoldingNoneProjector = Projector & { readonly holdsNone: string }

export const holdsNone = (projector: Projector): projector is HoldingNoneProjector => typeof (projector as Partial<HoldingNoneProjector>).holdsNone === 'string'

/**
 * `projector`, declared to keep none of the personal fields of the events it reads (ids, outcomes,
 * counts only; `why` says which): an erasure leaves its rows as a rebuild would, so it needs no
 * handler and does not read the erasure event. The conformance test (test/privacy/sealing.test.ts)
 * accepts the declaration in place of one, and the receipt lists it as holding none.
 */
export const holdsNoPersonalData = (projector: Projector, why: string): HoldingNoneProjector => ({ ...projector, holdsNone: why })

const subjectOf = (event: RecordedEvent): ErasedSubject => {
  const data = event.data as { kind: string; subject_id: string; org_id: string; fields: string[] }
  return { kind: data.kind, id: data.subject_id, orgId: data.org_id, fields: data.fields }
}

const presented = (event: RecordedEvent): RecordedEvent => {
  const data = presentErased(event.data)
  return data === event.data ? event : { ...event, data }
}

/**
 * `projector`, erasing (issue 31): it also reads the erasure event and hands it to `eraseSubject`,
 * in log order between its other events, so a person's rows are blanked as soon as the erasure is
 * in the log rather than on the next rebuild. Its other events reach it with an erased person's
 * fields as READ_MODEL_ERASED, never as the log's tombstones, so its columns keep their types.
 */
export function withErasure(projector: Projector, eraseSubject: SubjectEraser): ErasingProjector {
  async function applyAll(trx: Parameters<Projector['apply']>[0], events: readonly RecordedEvent[], fresh?: Parameters<NonNullable<Projector['applyBatch']>>[2]): Promise<void> {
    let from = 0
    for (let i = 0; i <= events.length; i++) {
      const erasure = i < events.length && events[i]!.type === SUBJECT_ERASED
      if (i < events.length && !erasure) continue
      if (i > from) await applyEvents(trx, projector, events.slice(from, i).map(presented), fresh)
      if (erasure) await eraseSubject(trx, subjectOf(events[i]!))
      from = i + 1
    }
  }
  return {
    ...projector,
    eventTypes: [...projector.eventTypes, SUBJECT_ERASED],
    eraseSubject,
    apply: (trx, event) => applyAll(trx, [event]),
    applyBatch: (trx, events, fresh) => applyAll(trx, events, fresh),
  }
}

/**
 * `columns` of `table`'s rows that hold a string, set to READ_MODEL_ERASED (a null stays null, as a
 * rebuild leaves it): the personal columns of the person's own rows (`where`).
 */
export async function blankColumns(trx: Db, table: string, columns: readonly string[], where: { column: string; value: string }): Promise<void> {
  if (!columns.length) return
  const sets = sql.join(columns.map((column) => sql`${sql.id(column)} = CASE WHEN ${sql.id(column)} IS NULL THEN NULL ELSE ${READ_MODEL_ERASED} END`))
  await sql`UPDATE ${sql.table(table)} SET ${sets} WHERE ${sql.id(where.column)} = ${where.value}`.execute(trx)
}

/**
 * The eraser of a person's own read model (contacts, leads): their row's personal `columns`, their
 * comments' text and their attachments' names (the notes of a person's record are personal). The
 * row is marked `is_erased` (a boolean column the table must have): what lets the records that
 * point at the person answer them as erased (`erased: true` beside the id) rather than as a person
 * with a blank name. A rebuild marks it the same, on the same event.
 */
export function personRecordEraser(options: { kind: string; table: string; columns: readonly string[]; notes: { comments: string; attachments: string } }): SubjectEraser {
  return async (trx, subject) => {
    if (subject.kind !== options.kind) return
    await blankColumns(trx, options.table, options.columns, { column: 'id', value: subject.id })
    await sql`UPDATE ${sql.table(options.table)} SET is_erased = true WHERE id = ${subject.id}`.execute(trx)
    await blankColumns(trx, options.notes.comments, ['comment'], { column: 'owner_id', value: subject.id })
    await blankColumns(trx, options.notes.attachments, ['file_name'], { column: 'owner_id', value: subject.id })
  }
}
