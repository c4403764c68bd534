import { ForbiddenError, NotFoundError } from '../../errors.ts'

/**
 * What the deciders of the case settings (approval rules, routing rules, escalation policies)
 * share: admins write them, a record of another organization or deleted reads as missing, and an
 * edit records only the fields it changes.
 */
export type SettingsActor = { profileId: string | null; isAdmin: boolean }

export function adminOnly(actor: SettingsActor): void {
  if (!actor.isAdmin) throw new ForbiddenError('Admin access required')
}

/** Refuses (404, `message`) a record that is not live in the organization. */
export function liveIn(state: { exists: boolean; deleted: boolean; orgId: string | null }, orgId: string, message: string): void {
  if (!state.exists || state.deleted || state.orgId !== orgId) throw new NotFoundError(message)
}

/** The requested fields whose values differ from the current ones (lists and objects compared by value). */
export function changedFields<F extends object>(current: F, requested: Partial<F>): Partial<F> {
  return Object.fromEntries(Object.entries(requested).filter(([key, value]) => value !== undefined && JSON.stringify(value) !== JSON.stringify(current[key as keyof F]))) as Partial<F>
}
