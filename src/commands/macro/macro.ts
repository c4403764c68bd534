import { DomainError, ForbiddenError, NotFoundError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * A macro (the original's backend/macros/): a canned reply an agent applies to a case, its
 * `%placeholders%` filled from the case (placeholders.ts). Two scopes with different owners: an
 * `org` macro is shared and admin-managed (owner null), a `personal` one belongs to one member and
 * is seen by nobody else, admins included. Deleting an org macro turns it off (it stays counted);
 * deleting a personal one removes it.
 */

export const MACRO_SCOPES = ['org', 'personal'] as const
export type MacroScope = (typeof MACRO_SCOPES)[number]
export type MacroFields = { title: string; body: string; scope: MacroScope; owner: string | null; is_active: boolean }

// Events: the storage contract.
export type MacroEvent =
  | { type: 'MacroCreated'; data: { macro_id: string; org_id: string } & MacroFields & { created_by: string | null; at: string } }
  | { type: 'MacroUpdated'; data: Partial<MacroFields> & { by: string | null; at: string } }
  | { type: 'MacroDeleted'; data: { by: string | null; at: string } }
  | { type: 'MacroApplied'; data: { case_id: string; by: string | null; at: string } }

// Fold.
export type MacroState = { exists: boolean; orgId: string | null; fields: MacroFields; deleted: boolean }

export const initialMacroState = (): MacroState => ({ exists: false, orgId: null, fields: { title: '', body: '', scope: 'org', owner: null, is_active: true }, deleted: false })

export function evolveMacro(state: MacroState, event: MacroEvent): MacroState {
  switch (event.type) {
    case 'MacroCreated': {
      const { org_id, title, body, scope, owner, is_active } = event.data
      return { ...state, exists: true, orgId: org_id, fields: { title, body, scope, owner, is_active } }
    }
    case 'MacroUpdated': {
      const { by: _by, at: _at, ...changes } = event.data
      return { ...state, fields: { ...state.fields, ...changes } }
    }
    case 'MacroDeleted':
      return { ...state, deleted: true }
    case 'MacroApplied':
      return state
  }
}

// Decisions. Who acts arrives in the command: the scope rules are the decider's.
export type MacroActor = { profileId: string | null; isAdmin: boolean }
export type MacroEdit = Partial<Pick<MacroFields, 'title' | 'body' | 'scope' | 'is_active'>>
export type MacroCommand =
  | { type: 'CreateMacro'; macroId: string; orgId: string; fields: Omit<MacroFields, 'owner'>; actor: MacroActor; at: string }
  | { type: 'ChangeMacro'; orgId: string; changes: MacroEdit; actor: MacroActor; at: string }
  | { type: 'DeleteMacro'; orgId: string; actor: MacroActor; at: string }
  | { type: 'ApplyMacro'; orgId: string; caseId: string; actor: MacroActor; at: string }

/** Whether the actor sees the macro at all: an org macro, or their own personal one. */
export const seesMacro = (fields: Pick<MacroFields, 'scope' | 'owner'>, actor: MacroActor): boolean => fields.scope === 'org' || (actor.profileId !== null && fields.owner === actor.profileId)

/** The owner a macro of `scope` gets from this actor: an org macro needs an admin and has none, a personal one is the actor's. */
function ownerFor(scope: MacroScope, actor: MacroActor): string | null {
  if (scope === 'org') {
    if (!actor.isAdmin) throw new ForbiddenError('Only admins can manage org-scope macros.')
    return null
  }
  if (actor.profileId === null) throw new ForbiddenError('A personal macro belongs to a member; the organization API key has none.')
  return actor.profileId
}

function visible(state: MacroState, orgId: string, actor: MacroActor): void {
  // Another member's personal macro reads as missing, for writes too: a 403 would confirm it exists.
  if (!state.exists || state.deleted || state.orgId !== orgId || !seesMacro(state.fields, actor)) throw new NotFoundError()
}

function writable(state: MacroState, orgId: string, actor: MacroActor): void {
  visible(state, orgId, actor)
  if (state.fields.scope === 'org' && !actor.isAdmin) throw new ForbiddenError('Only admins can edit org-scope macros.')
}

function changed(current: MacroFields, requested: Partial<MacroFields>): Partial<MacroFields> {
  return Object.fromEntries(Object.entries(requested).filter(([key, value]) => value !== undefined && current[key as keyof MacroFields] !== value)) as Partial<MacroFields>
}

export function decideMacro(command: MacroCommand, state: MacroState): MacroEvent[] {
  const by = command.actor.profileId
  switch (command.type) {
    case 'CreateMacro':
      if (state.exists) return []
      return [{ type: 'MacroCreated', data: { macro_id: command.macroId, org_id: command.orgId, ...command.fields, owner: ownerFor(command.fields.scope, command.actor), created_by: by, at: command.at } }]
    case 'ChangeMacro': {
      writable(state, command.orgId, command.actor)
      const scope = command.changes.scope ?? state.fields.scope
      const changes = changed(state.fields, { ...command.changes, owner: ownerFor(scope, command.actor) })
      return Object.keys(changes).length ? [{ type: 'MacroUpdated', data: { ...changes, by, at: command.at } }] : []
    }
    case 'DeleteMacro':
      if (state.exists && state.deleted && state.orgId === command.orgId) return []
      writable(state, command.orgId, command.actor)
      if (state.fields.scope === 'personal') return [{ type: 'MacroDeleted', data: { by, at: command.at } }]
      return state.fields.is_active ? [{ type: 'MacroUpdated', data: { is_active: false, by, at: command.at } }] : []
    case 'ApplyMacro':
      visible(state, command.orgId, command.actor)
      if (!state.fields.is_active) throw new DomainError(400, 'Macro is inactive.')
      return [{ type: 'MacroApplied', data: { case_id: command.caseId, by, at: command.at } }]
  }
}

export const macroDecider: Decider<MacroCommand, MacroState, MacroEvent> = { initialState: initialMacroState, evolve: evolveMacro, decide: decideMacro }

export const macroStreams = streamCategory('macro')
export const macroStream = macroStreams.stream
