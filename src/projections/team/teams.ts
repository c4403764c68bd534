import { sql } from 'kysely'
import { idsAmong } from '../../db/ids-among.ts'
import { teamStreams } from '../../commands/team/team.ts'
import type { TeamEvent } from '../../commands/team/team.ts'
import type { Db } from '../../db/database.ts'
import { containsPattern } from '../../db/like.ts'
import { domainEventOf } from '../../events/versions.ts'
import { fetchPage } from '../kernel/records.ts'
import type { Projector } from '../kernel/projector.ts'
import type { TeamRow } from './tables.ts'

export type { TeamMemberRow, TeamRow } from './tables.ts'

async function setMembers(db: Db, teamId: string, users: readonly string[]): Promise<void> {
  await db.deleteFrom('team_members').where('team_id', '=', teamId).execute()
  if (users.length) await db.insertInto('team_members').values(users.map((profile_id) => ({ team_id: teamId, profile_id }))).execute()
}

export const teamsProjector: Projector = {
  name: 'teams',
  version: 1,
  eventTypes: ['TeamCreated', 'TeamUpdated', 'TeamMembersChanged', 'TeamDeleted'],
  tables: ['teams', 'team_members'],
  async createTables(db) {
    await db.schema
      .createTable('teams')
      .addColumn('id', 'uuid', (c) => c.primaryKey())
      .addColumn('org_id', 'uuid', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('created_by', 'uuid')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute()
    await sql`CREATE INDEX teams_org_name ON teams (org_id, lower(name))`.execute(db)
    await db.schema
      .createTable('team_members')
      .addColumn('team_id', 'uuid', (c) => c.notNull())
      .addColumn('profile_id', 'uuid', (c) => c.notNull())
      .addPrimaryKeyConstraint('team_members_pk', ['team_id', 'profile_id'])
      .execute()
    await sql`CREATE INDEX team_members_profile ON team_members (profile_id)`.execute(db)
  },
  // Every statement sets values (member sets are replaced whole), so applying an event twice changes nothing.
  async apply(db, recorded) {
    const event = domainEventOf<TeamEvent>(recorded)
    const id = teamStreams.idOf(recorded.streamName)
    const at = new Date(event.data.at)
    switch (event.type) {
      case 'TeamCreated': {
        const { org_id, name, description, users, created_by } = event.data
        await db.insertInto('teams').values({ id, org_id, name, description, created_by, created_at: at, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
        return setMembers(db, id, users)
      }
      case 'TeamUpdated': {
        const { name, description } = event.data
        await db.updateTable('teams').set({ ...(name !== undefined && { name }), ...(description !== undefined && { description }), updated_at: at }).where('id', '=', id).execute()
        return
      }
      case 'TeamMembersChanged':
        await db.updateTable('teams').set({ updated_at: at }).where('id', '=', id).execute()
        return setMembers(db, id, event.data.users)
      case 'TeamDeleted':
        await db.deleteFrom('team_members').where('team_id', '=', id).execute()
        await db.deleteFrom('teams').where('id', '=', id).execute()
    }
  },
}

// Queries read the projection's tables together with the identity tables (profiles, users).

export type TeamMember = { team_id: string; id: string; email: string; role: string; is_active: boolean }
export type TeamListFilter = { limit: number; offset: number; name?: string }

export function listTeams(db: Db, orgId: string, filter: TeamListFilter): Promise<{ count: number; rows: TeamRow[] }> {
  let query = db.selectFrom('teams').where('org_id', '=', orgId)
  if (filter.name) query = query.where('name', 'ilike', containsPattern(filter.name))
  return fetchPage<TeamRow>(query, filter, (q) => q.orderBy(sql`lower(name)`).orderBy('id'))
}

/** Every team of the organization, by name, for pickers. */
export function allTeams(db: Db, orgId: string): Promise<TeamRow[]> {
  return db.selectFrom('teams').selectAll().where('org_id', '=', orgId).orderBy(sql`lower(name)`).orderBy('id').execute()
}

/** A team of the organization, or undefined: another org's id looks exactly like a missing one. */
export function teamOf(db: Db, orgId: string, id: string): Promise<TeamRow | undefined> {
  return db.selectFrom('teams').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst()
}

/** The members of these teams, inactive profiles included, by email. */
export async function membersOf(db: Db, teamIds: readonly string[]): Promise<TeamMember[]> {
  if (!teamIds.length) return []
  return db
    .selectFrom('team_members as m')
    .innerJoin('profiles as p', 'p.id', 'm.profile_id')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .select(['m.team_id', 'p.id', 'u.email', 'p.role', 'p.is_active'])
    .where('m.team_id', 'in', teamIds)
    .orderBy(sql`lower(u.email)`)
    .orderBy('p.id')
    .execute()
}

/** Team id to its members' profile ids (all members, for pickers). */
export async function memberIdsOf(db: Db, teamIds: readonly string[]): Promise<Map<string, string[]>> {
  const byTeam = new Map<string, string[]>(teamIds.map((id) => [id, []]))
  for (const member of await membersOf(db, teamIds)) byTeam.get(member.team_id)?.push(member.id)
  return byTeam
}

/** Which of these ids are teams of the organization: what a deal may point at. */
export function teamIds(db: Db, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  return idsAmong(db.selectFrom('teams').where('org_id', '=', orgId), ids)
}

/** The teams of the organization the profile belongs to: what a share with a team reaches (documents). */
export async function teamsOfMember(db: Db, orgId: string, profileId: string | null): Promise<string[]> {
  if (profileId === null) return []
  const rows = await db.selectFrom('team_members as m').innerJoin('teams as t', 't.id', 'm.team_id').select('t.id').where('t.org_id', '=', orgId).where('m.profile_id', '=', profileId).execute()
  return rows.map((row) => row.id)
}
