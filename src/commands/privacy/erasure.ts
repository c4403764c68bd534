import type { Decider } from '../decider.ts'

/**
 * An erasure (issue 31): stream `erasure-<kind>-<id>`, one per person, whose one event is the
 * receipt. It holds no personal data: the person's kind and id, what kinds of fields were erased
 * and from how many events, the read models that blank them on reading it, who erased and when.
 */
export type SubjectErasedData = {
  receipt_id: string
  org_id: string
  kind: string
  subject_id: string
  /** The personal fields the person's events held (names, not values). */
  fields: string[]
  /** How many of the person's events held personal data (now unreadable). */
  events: number
  /** The read models that held the person's data and blanked it on this event (projections/privacy/erasing.ts). */
  read_models: string[]
  /**
   * The read models that read the person's events but were declared to keep none of their personal
   * fields (holdsNoPersonalData): nothing to blank. Absent from receipts recorded before the declaration.
   */
  read_models_holding_none?: string[]
  /** How many files attached to the person's record were deleted from the file store. */
  files_deleted: number
  /** When the last database backup holding the destroyed key expires. */
  key_backups_expire_at: string
  by: string | null
  at: string
}
export type ErasureEvent = { type: 'SubjectErased'; data: SubjectErasedData }
export type ErasureCommand = { type: 'RecordErasure'; receipt: SubjectErasedData }
export type ErasureState = { receipt: SubjectErasedData | null }

export const erasureStream = (kind: string, subjectId: string) => `erasure-${kind}-${subjectId}`

/** A person is erased once: a second erasure records nothing (the first receipt stands). */
export const erasureDecider: Decider<ErasureCommand, ErasureState, ErasureEvent> = {
  initialState: () => ({ receipt: null }),
  evolve: (_state, event) => ({ receipt: event.data }),
  decide: (command, state) => (state.receipt ? [] : [{ type: 'SubjectErased', data: command.receipt }]),
}
