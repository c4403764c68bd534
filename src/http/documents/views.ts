import type { z } from 'zod'
import type { Db } from '../../db/database.ts'
import { displayName, membersByIds } from '../../identity/users.ts'
import type { DocumentRow } from '../../projections/document/documents.ts'
import { memberIdsOf } from '../../projections/team/teams.ts'
import { nameRefs, profileRefOf } from '../kernel/relations.ts'
import type { DocumentView } from './schemas.ts'

/** Documents as the API answers them: shares as profiles and teams (with how many people each team reaches), the uploader as a user. */
export async function documentViews(db: Db, orgId: string, rows: readonly DocumentRow[]): Promise<z.infer<typeof DocumentView>[]> {
  const profileIds = [...new Set(rows.flatMap((row) => [...row.assigned_to, ...(row.created_by ? [row.created_by] : [])]))]
  const teamIds = [...new Set(rows.flatMap((row) => row.teams))]
  const [members, teams, teamMembers] = await Promise.all([membersByIds(db, orgId, profileIds), nameRefs(db, 'teams', orgId, teamIds), memberIdsOf(db, teamIds)])
  const member = new Map(members.map((row) => [row.id, row]))
  return rows.map((row) => {
    const uploader = row.created_by ? member.get(row.created_by) : undefined
    return {
      id: row.id,
      title: row.title,
      document_file: row.file_name,
      content_type: row.content_type,
      status: row.status,
      shared_to: row.assigned_to.flatMap((id) => (member.has(id) ? [profileRefOf(member.get(id)!)] : [])),
      teams: row.teams.flatMap((id) => (teams.has(id) ? [{ ...teams.get(id)!, member_count: teamMembers.get(id)?.length ?? 0 }] : [])),
      size_bytes: row.size,
      created_at: row.created_at.toISOString(),
      created_by: uploader ? { id: uploader.user_id, profile_id: uploader.id, email: uploader.email, first_name: uploader.first_name, last_name: uploader.last_name, name: displayName(uploader) } : null,
      download_url: `/api/documents/${row.id}/download/`,
    }
  })
}

// The original's icon classes (Document.file_type), by the sniffed content type.
const ICONS: readonly [RegExp, string][] = [
  [/^application\/pdf$/, 'fa fa-file-pdf'],
  [/^image\//, 'fa fa-file-image'],
  [/^audio\//, 'fa fa-file-audio'],
  [/^video\//, 'fa fa-file-video'],
  [/spreadsheet|^text\/csv$/, 'fa fa-file-excel'],
  [/^text\/|wordprocessing|opendocument\.text/, 'fa fa-file-alt'],
  [/zip|gzip/, 'fa fa-file-archive'],
]

export const fileTypeCode = (contentType: string): string => ICONS.find(([pattern]) => pattern.test(contentType))?.[1] ?? 'fa fa-file'
