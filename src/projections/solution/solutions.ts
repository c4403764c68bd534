import { sql } from 'kysely'
import { solutionNames, solutionStreams } from '../../commands/solution/solution.ts'
import { containsPattern } from '../../db/like.ts'
import { fetchPage, recordProjector } from '../kernel/records.ts'
import type { SolutionRow } from './tables.ts'
import type { Db } from '../../db/database.ts'
import { visibleSql } from '../../visibility/policy.ts'
import type { Seer } from '../../visibility/policy.ts'
import { wordQuery } from '../search/queries.ts'

export type { SolutionRow } from './tables.ts'

export const solutionsProjector = recordProjector({
  name: 'solutions',
  version: 1,
  table: 'solutions',
  streams: solutionStreams,
  events: solutionNames.events,
  columns: (table) =>
    table
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('is_published', 'boolean', (c) => c.notNull()),
  indexes: async (db) => {
    await sql`CREATE INDEX solutions_org_title ON solutions (org_id, lower(title))`.execute(db)
  },
})

const live = (db: Db, orgId: string) => db.selectFrom('solutions').where('org_id', '=', orgId).where('is_deleted', '=', false)

/** `seer`: whose visibility rule applies (the policy's Solution line; the staff see every solution, a portal contact the published ones). */
export type SolutionListFilter = { limit: number; offset: number; title?: string; search?: string; status?: string; isPublished?: boolean; seer?: Seer }

/** A page of the organization's solutions, most recently changed first (then by title); unknown status values match nothing. */
export function listSolutions(db: Db, orgId: string, filter: SolutionListFilter): Promise<{ count: number; rows: SolutionRow[] }> {
  let query = live(db, orgId)
  if (filter.seer) query = query.where(visibleSql('Solution', filter.seer))
  if (filter.title) query = query.where('title', 'ilike', containsPattern(filter.title))
  if (filter.search) {
    const pattern = containsPattern(filter.search)
    query = query.where((eb) => eb.or([eb('title', 'ilike', pattern), eb('description', 'ilike', pattern)]))
  }
  if (filter.status !== undefined) query = query.where(sql<boolean>`status = ${filter.status}`)
  if (filter.isPublished !== undefined) query = query.where('is_published', '=', filter.isPublished)
  return fetchPage<SolutionRow>(query, filter, (q) => q.orderBy('updated_at', 'desc').orderBy(sql`lower(title)`).orderBy('id'))
}

export type SolutionTotals = { count: number; published: number; draft: number; reviewed: number; approved_unpublished: number }

/** Totals of the whole knowledge base, whatever the filters (where-the-spec-is-silent.md). */
export async function solutionTotals(db: Db, orgId: string): Promise<SolutionTotals> {
  const row = await live(db, orgId)
    .select((eb) => [
      eb.fn.countAll<string>().as('count'),
      sql<string>`count(*) FILTER (WHERE is_published)`.as('published'),
      sql<string>`count(*) FILTER (WHERE status = 'draft')`.as('draft'),
      sql<string>`count(*) FILTER (WHERE status = 'reviewed')`.as('reviewed'),
      sql<string>`count(*) FILTER (WHERE status = 'approved' AND NOT is_published)`.as('approved_unpublished'),
    ])
    .executeTakeFirstOrThrow()
  return { count: Number(row.count), published: Number(row.published), draft: Number(row.draft), reviewed: Number(row.reviewed), approved_unpublished: Number(row.approved_unpublished) }
}

export type SolutionSuggestion = SolutionRow & { score: number }

/**
 * The solutions the seer may read that best answer a text (a customer's case subject, as they type
 * it): every word of it as a prefix of a word of the title or text (search's `wordQuery`, the same
 * parsing as global search), the title's words weighing more, best first. Over the solutions' own
 * rows rather than the search documents: the policy's `published` rule reads `is_published`, which
 * the search documents do not keep, and a knowledge base is small beside the whole organization.
 */
export async function suggestSolutions(db: Db, orgId: string, seer: Seer, text: string, limit: number): Promise<SolutionSuggestion[]> {
  const words = wordQuery(text)
  if (words === null) return []
  const document = sql`setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', coalesce(description, '')), 'B')`
  const { rows } = await sql<SolutionSuggestion>`SELECT *, ts_rank(${document}, to_tsquery('simple', ${words}))::float8 AS score FROM solutions
    WHERE org_id = ${orgId} AND NOT is_deleted AND ${visibleSql('Solution', seer)} AND ${document} @@ to_tsquery('simple', ${words})
    ORDER BY score DESC, lower(title), id LIMIT ${limit}`.execute(db)
  return rows
}

/** A live solution of the organization, or undefined: another org's id looks exactly like a missing one. */
export function solutionOf(db: Db, orgId: string, id: string): Promise<SolutionRow | undefined> {
  return live(db, orgId).selectAll().where('id', '=', id).executeTakeFirst()
}

/**
 * The organization's published solutions whose title or description contains any of `terms` (every
 * published one when none), most recently changed first: the case's suggester (the original's kb_views.py).
 */
export function publishedSolutionsMatching(db: Db, orgId: string, terms: readonly string[], limit: number): Promise<SolutionRow[]> {
  let query = live(db, orgId).selectAll().where('is_published', '=', true)
  if (terms.length) query = query.where((eb) => eb.or(terms.flatMap((term) => [eb('title', 'ilike', containsPattern(term)), eb('description', 'ilike', containsPattern(term))])))
  return query.orderBy('updated_at', 'desc').orderBy('id').limit(limit).execute()
}
