import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { checkRelations } from '../../projections/record/relations.ts'
import { webFormOf } from '../../projections/webform/webforms.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { webFormDecider, webFormStream } from './webform.ts'
import type { FormDesign } from './webform.ts'

type DesignDeps = Pick<Deps, 'db' | 'store' | 'clock'>

function requireAdmin(caller: Caller): void {
  if (!caller.isAdmin) throw new ForbiddenError('Only an organization admin may do this')
}

/** Designs a new form (admins), unpublished: its assignees must be members of the organization. */
export async function createWebForm(deps: DesignDeps, caller: Caller, design: FormDesign): Promise<{ formId: string; position: Position | null }> {
  requireAdmin(caller)
  await checkRelations(deps.db, caller.orgId, { assigned_to: design.assigned_to })
  const formId = randomUUID()
  const { run, position } = commandSession(deps.store, caller)
  await run(webFormDecider, webFormStream(formId), { type: 'CreateWebForm', formId, orgId: caller.orgId, design, actorId: caller.profileId, at: deps.clock().toISOString() })
  return { formId, position: position() }
}

/** Changes the parts of a form's design that are given (admins); a published form stays published, and serves the new design at once. */
export async function updateWebForm(deps: DesignDeps, caller: Caller, formId: string, design: Partial<FormDesign>): Promise<{ position: Position | null }> {
  requireAdmin(caller)
  const current = await orNotFound(webFormOf(deps.db, caller.orgId, formId))
  await checkRelations(deps.db, caller.orgId, { assigned_to: design.assigned_to }, {}, { assigned_to: current.assigned_to })
  const { run, position } = commandSession(deps.store, caller)
  await run(webFormDecider, webFormStream(formId), { type: 'UpdateWebForm', orgId: caller.orgId, design, at: deps.clock().toISOString() })
  return { position: position() }
}
