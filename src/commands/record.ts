import { ForbiddenError, NotFoundError } from '../errors.ts'

/**
 * What the plain CRM records (accounts, contacts) share: a bag of fields written by create,
 * replace (PUT) and partial update (PATCH), soft deletion by an admin or the creator, and
 * invisibility to other organizations. Each record module keeps its own events (the storage
 * contract) and uses these pieces in its decider.
 */
export type RecordState<Fields> = { exists: boolean; orgId: string | null; createdBy: string | null; deleted: boolean; fields: Fields }

export const initialRecordState = <Fields>(empty: Fields): RecordState<Fields> => ({ exists: false, orgId: null, createdBy: null, deleted: false, fields: empty })

/** The caller deleting: their profile (null for the API key) and whether they are an admin. */
export type Actor = { profileId: string | null; isAdmin: boolean }

/** Another organization's record, a missing one and a deleted one all look the same: 404. */
export function assertVisible(state: RecordState<unknown>, orgId: string): void {
  if (!state.exists || state.orgId !== orgId || state.deleted) throw new NotFoundError()
}

export function assertMayDelete(state: RecordState<unknown>, actor: Actor): void {
  if (!actor.isAdmin && (actor.profileId === null || actor.profileId !== state.createdBy)) throw new ForbiddenError('Only an admin or the creator may delete this record')
}

// Relation lists are sets: the same ids in another order are no change.
const comparable = (value: unknown) => (Array.isArray(value) ? JSON.stringify([...value].sort()) : JSON.stringify(value ?? null))

/** The requested values that differ from the current ones; empty when the outcome already holds. */
export function changedFields<Fields extends object>(current: Fields, requested: Partial<Fields>): Partial<Fields> {
  const changes: Partial<Fields> = {}
  for (const key of Object.keys(requested) as (keyof Fields)[]) {
    if (requested[key] !== undefined && comparable(requested[key]) !== comparable(current[key])) changes[key] = requested[key]
  }
  return changes
}

/** A PUT: every field the body leaves out takes its empty value, so relation lists it does not mention are cleared. */
export function replacing<Fields extends object>(empty: Fields, body: Partial<Fields>): Fields {
  const fields = { ...empty }
  for (const key of Object.keys(empty) as (keyof Fields)[]) if (body[key] !== undefined) fields[key] = body[key] as Fields[keyof Fields]
  return fields
}
