import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'

/**
 * `@name` mentions in a comment, as the original resolves them: `name` is the part before the @ of
 * an active member's email, in the comment's organization. An @ inside an email address is not a
 * mention (a letter or digit before it), and names no member has are ignored.
 */
const MENTION = /(?<![A-Za-z0-9])@([A-Za-z0-9._-]+)/g

/** The distinct names mentioned, lower case, in order of first mention. */
export function mentionedNames(text: string): string[] {
  return [...new Set([...text.matchAll(MENTION)].map((match) => match[1]!.toLowerCase()))]
}

/**
 * The profiles of the organization the comment's mentions name, resolved when the comment is
 * written: the comment event records them, so who was mentioned never changes with later renames.
 */
export async function mentionedProfiles(db: Db, orgId: string, text: string): Promise<string[]> {
  const names = mentionedNames(text)
  if (!names.length) return []
  const { rows } = await sql<{ id: string; name: string }>`SELECT p.id, lower(split_part(u.email, '@', 1)) AS name FROM profiles p JOIN users u ON u.id = p.user_id
    WHERE p.org_id = ${orgId} AND p.is_active AND lower(split_part(u.email, '@', 1)) = ANY (${names}::text[]) ORDER BY p.created_at, p.id`.execute(db)
  // Two members may share a local part (ann@a.test, ann@b.test): the earlier member is the one named, as in the original.
  const byName = new Map<string, string>()
  for (const row of rows) if (!byName.has(row.name)) byName.set(row.name, row.id)
  return names.flatMap((name) => byName.get(name) ?? [])
}
