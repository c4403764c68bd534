/** The teams read model: one row per live team and one per membership; a deleted team leaves no rows. */
export type TeamRow = { id: string; org_id: string; name: string; description: string | null; created_by: string | null; created_at: Date; updated_at: Date }

export type TeamMemberRow = { team_id: string; profile_id: string }

export type TeamTables = { teams: TeamRow; team_members: TeamMemberRow }

// This module's tables join the one Database type (db/database.ts).
declare module '../../db/database.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the tables are the members
  interface Database extends TeamTables {}
}
