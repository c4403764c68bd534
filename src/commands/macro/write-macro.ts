import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ValidationError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { organizationById } from '../../identity/organizations.ts'
import { memberById } from '../../identity/users.ts'
import { caseOf } from '../../projections/case/queries.ts'
import { contactOf } from '../../projections/contact/contacts.ts'
import { macroOf } from '../../projections/macro/macros.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import { macroDecider, macroStream } from './macro.ts'
import type { MacroActor, MacroCommand, MacroEdit, MacroFields } from './macro.ts'
import { renderMacro, unknownPlaceholders } from './placeholders.ts'
import type { PlaceholderValues } from './placeholders.ts'

type MacroDeps = Pick<Deps, 'db' | 'store' | 'clock'>
const actorOf = (caller: Caller): MacroActor => ({ profileId: caller.profileId, isAdmin: caller.isAdmin })

async function runOn(deps: MacroDeps, caller: Caller, id: string, command: MacroCommand): Promise<Position | null> {
  const session = commandSession(deps.store, caller)
  await session.run(macroDecider, macroStream(id), command)
  return session.position()
}

/** Creates a macro: an org one (admins) or the caller's own personal one. */
export async function createMacro(deps: MacroDeps, caller: Caller, fields: Omit<MacroFields, 'owner'>): Promise<{ id: string; position: Position | null }> {
  const id = randomUUID()
  const position = await runOn(deps, caller, id, { type: 'CreateMacro', macroId: id, orgId: caller.orgId, fields, actor: actorOf(caller), at: deps.clock().toISOString() })
  return { id, position }
}

/** Changes a macro's named fields (its scope within the caller's authority). */
export const changeMacro = (deps: MacroDeps, caller: Caller, id: string, changes: MacroEdit): Promise<Position | null> =>
  runOn(deps, caller, id, { type: 'ChangeMacro', orgId: caller.orgId, changes, actor: actorOf(caller), at: deps.clock().toISOString() })

/** Turns an org macro off, or deletes a personal one. */
export const deleteMacro = (deps: MacroDeps, caller: Caller, id: string): Promise<Position | null> =>
  runOn(deps, caller, id, { type: 'DeleteMacro', orgId: caller.orgId, actor: actorOf(caller), at: deps.clock().toISOString() })

/**
 * The placeholders' values for this caller on this case: its first contact, the case, the caller
 * (none for the API key) and the organization. A case the caller may not see reads as missing.
 */
async function placeholderValues(deps: MacroDeps, caller: Caller, caseId: string): Promise<PlaceholderValues> {
  const found = await caseOf(deps.db, caller.orgId, caseId)
  if (!found || !mayAccess('Case', { createdBy: found.created_by, assignedTo: found.assigned_to, watchers: found.watchers }, caller)) throw new ValidationError({ case_id: ['Expected the id of a case of this organization that you can see.'] })
  const [contact, agent, org] = await Promise.all([
    found.contacts[0] ? contactOf(deps.db, caller.orgId, found.contacts[0]) : undefined,
    caller.profileId ? memberById(deps.db, caller.orgId, caller.profileId) : undefined,
    organizationById(deps.db, caller.orgId),
  ])
  const contactName = contact ? `${contact.first_name} ${contact.last_name ?? ''}`.trim() || (contact.email ?? '') : ''
  return {
    customer_name: contactName,
    customer_email: contact?.email ?? '',
    case_id: found.id,
    case_subject: found.name,
    agent_name: agent ? `${agent.first_name} ${agent.last_name}`.trim() || agent.email.split('@')[0]! : '',
    agent_email: agent?.email ?? '',
    org_name: org.name,
  }
}

/**
 * Applies a macro to a case: its body with the placeholders filled, the tokens it could not fill,
 * and a use recorded (the macro's usage count). Refused for a macro the caller does not see (404)
 * or one turned off (400).
 */
export async function applyMacro(deps: MacroDeps, caller: Caller, input: { macroId: string; caseId: string }): Promise<{ rendered_body: string; unknown_placeholders: string[]; position: Position | null }> {
  const macro = await orNotFound(macroOf(deps.db, caller, input.macroId))
  const values = await placeholderValues(deps, caller, input.caseId)
  const position = await runOn(deps, caller, input.macroId, { type: 'ApplyMacro', orgId: caller.orgId, caseId: input.caseId, actor: actorOf(caller), at: deps.clock().toISOString() })
  return { rendered_body: renderMacro(macro.body, values), unknown_placeholders: unknownPlaceholders(macro.body), position }
}
