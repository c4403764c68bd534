/** The teams read model: one row per live team and one per membership; a deleted team leaves no rows. */
export type TeamRow = { id: string; org_id: string; name: string; description: string | null; created_by: string | null; created_at: Date; updated_at: Date }

export type TeamMemberRow = { team_id: string; profile_id: string }

export type TeamTables = { teams: TeamRow; team_members: TeamMemberRow }

