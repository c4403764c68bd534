import { z } from 'zod'
import type { Deps } from '../../deps.ts'
import { DomainError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import type { CaseInput } from './case.ts'
import { changeCase, deleteCase } from './write-case.ts'

/**
 * Bulk update and bulk delete (the original's bulk_views.py): one command per case, each with its
 * own events and its own rules (who may change or delete it, closing needs a date, a merged case is
 * read-only), so one refused case neither rolls back nor hides the others, where the original's one
 * transaction failed them all. Each id gets its verdict.
 */
export type BulkItem = { id: string; ok: true } | { id: string; ok: false; status: number; errors: unknown }
export type BulkOutcome = { done: number; failed: number; results: BulkItem[]; position: Position | null }

async function eachCase(ids: readonly string[], work: (id: string) => Promise<unknown>): Promise<Omit<BulkOutcome, 'position'>> {
  const results: BulkItem[] = []
  // One id named twice is one case.
  for (const id of new Set(ids)) {
    // Not an id at all: no case by that id, like any other missing one.
    if (!z.uuid().safeParse(id).success) {
      results.push({ id, ok: false, status: 404, errors: 'Case not found' })
      continue
    }
    try {
      await work(id)
      results.push({ id, ok: true })
    } catch (error) {
      // A refusal is the item's verdict; anything else is a real failure and stops the request.
      if (!(error instanceof DomainError) || error.statusCode >= 500) throw error
      results.push({ id, ok: false, status: error.statusCode, errors: error.errors })
    }
  }
  const done = results.filter((item) => item.ok).length
  return { done, failed: results.length - done, results }
}

/** The same fields set on each case, as PATCH would set them. */
export async function bulkUpdateCases(deps: Pick<Deps, 'db' | 'store' | 'clock'>, caller: Caller, ids: readonly string[], input: CaseInput, session: CommandSession = commandSession(deps.store, caller)): Promise<BulkOutcome> {
  const outcome = await eachCase(ids, (id) => changeCase(deps, caller, id, { input, replace: false }, session))
  return { ...outcome, position: session.position() }
}

/** Each case deleted as DELETE would (an admin or its creator). */
export async function bulkDeleteCases(deps: Pick<Deps, 'db' | 'store' | 'clock'>, caller: Caller, ids: readonly string[], session: CommandSession = commandSession(deps.store, caller)): Promise<BulkOutcome> {
  const outcome = await eachCase(ids, (id) => deleteCase(deps, caller, id, session))
  return { ...outcome, position: session.position() }
}
