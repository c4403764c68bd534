import { NotFoundError } from '../../errors.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/** A team: a named group of the organization's profiles (for assignment and goals). Deleting removes it for good. */

// Events: the storage contract. Member sets are recorded whole and sorted, so a replay needs no earlier state.
export type TeamEvent =
  | { type: 'TeamCreated'; data: { team_id: string; org_id: string; name: string; description: string | null; users: string[]; created_by: string | null; at: string } }
  | { type: 'TeamUpdated'; data: { name?: string; description?: string | null; at: string } }
  | { type: 'TeamMembersChanged'; data: { users: string[]; at: string } }
  | { type: 'TeamDeleted'; data: { at: string } }

// Fold.
export type TeamState = { exists: boolean; orgId: string | null; name: string; description: string | null; users: string[]; deleted: boolean }

export const initialTeamState = (): TeamState => ({ exists: false, orgId: null, name: '', description: null, users: [], deleted: false })

export function evolveTeam(state: TeamState, event: TeamEvent): TeamState {
  switch (event.type) {
    case 'TeamCreated':
      return { ...state, exists: true, orgId: event.data.org_id, name: event.data.name, description: event.data.description, users: event.data.users }
    case 'TeamUpdated':
      return { ...state, name: event.data.name ?? state.name, description: event.data.description === undefined ? state.description : event.data.description }
    case 'TeamMembersChanged':
      return { ...state, users: event.data.users }
    case 'TeamDeleted':
      return { ...state, deleted: true }
  }
}

// Decisions. Time, ids, the caller and the already-checked member ids arrive in the command.
export type TeamCommand =
  | { type: 'CreateTeam'; teamId: string; orgId: string; name: string; description: string | null; users: string[]; actorId: string | null; at: string }
  | { type: 'UpdateTeam'; orgId: string; name?: string; description?: string | null; users?: string[]; at: string }
  | { type: 'DeleteTeam'; orgId: string; at: string }

const memberSet = (users: readonly string[]) => [...new Set(users)].sort()
const sameMembers = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((id, i) => id === b[i])

function existing(state: TeamState, orgId: string): void {
  if (!state.exists || state.orgId !== orgId) throw new NotFoundError()
}

function decideUpdate(command: Extract<TeamCommand, { type: 'UpdateTeam' }>, state: TeamState): TeamEvent[] {
  existing(state, command.orgId)
  if (state.deleted) throw new NotFoundError()
  const events: TeamEvent[] = []
  const changes: { name?: string; description?: string | null } = {}
  if (command.name !== undefined && command.name !== state.name) changes.name = command.name
  if (command.description !== undefined && command.description !== state.description) changes.description = command.description
  if (Object.keys(changes).length) events.push({ type: 'TeamUpdated', data: { ...changes, at: command.at } })
  const users = command.users && memberSet(command.users)
  if (users && !sameMembers(users, state.users)) events.push({ type: 'TeamMembersChanged', data: { users, at: command.at } })
  return events
}

export function decideTeam(command: TeamCommand, state: TeamState): TeamEvent[] {
  switch (command.type) {
    case 'CreateTeam': {
      if (state.exists) return []
      const { teamId, orgId, name, description, users, actorId, at } = command
      return [{ type: 'TeamCreated', data: { team_id: teamId, org_id: orgId, name, description, users: memberSet(users), created_by: actorId, at } }]
    }
    case 'UpdateTeam':
      return decideUpdate(command, state)
    case 'DeleteTeam':
      existing(state, command.orgId)
      return state.deleted ? [] : [{ type: 'TeamDeleted', data: { at: command.at } }]
  }
}

export const teamDecider: Decider<TeamCommand, TeamState, TeamEvent> = { initialState: initialTeamState, evolve: evolveTeam, decide: decideTeam }

export const teamStreams = streamCategory('team')
