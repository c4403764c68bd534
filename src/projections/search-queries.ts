import { sql } from 'kysely'
import type { Kysely, RawBuilder } from 'kysely'
import type { Viewer } from './opportunity-queries.ts'
import { hasTrigrams } from './search.ts'
import { KIND_SPECS } from './search-documents.ts'
import type { KindSpec, SearchKind } from './search-documents.ts'

/**
 * Global search's query: a handful of the best matches of each kind, org-scoped and filtered by
 * what the viewer may see in that kind's list. Matches come in tiers, each read from an index and
 * bounded, so a query matching half the organization costs what one matching a handful does:
 *   3  the record's name starts with the query (whole-name prefix, in name order);
 *   1  every word of the query starts a word of the record (full-text prefix search over names,
 *      emails, companies, descriptions; up to WORD_CANDIDATES of them, ranked by ts_rank, names
 *      weighing more);
 *   0  still short of a handful: names containing the query, or close to it (pg_trgm, typos).
 * A hit's score is its best tier plus its rank within it; the answer is ordered by score.
 */
export type SearchHit = { type: SearchKind; id: string; title: string; subtitle: string; score: number }

/** Queries shorter than this match nearly everything (the original's floor too): no search. */
export const MIN_QUERY = 2
/** Full-text candidates ranked per kind: enough to rank well, bounded however many records match. */
const WORD_CANDIDATES = 50
/** Fuzzy matching needs a trigram of the query's own. */
const MIN_FUZZY = 3

const trigramsByDb = new WeakMap<Kysely<any>, Promise<boolean>>()
const trigramsOf = (db: Kysely<any>): Promise<boolean> => {
  let known = trigramsByDb.get(db)
  if (!known) trigramsByDb.set(db, (known = hasTrigrams(db)))
  return known
}

const likePrefix = (text: string) => `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
const likeContains = (text: string) => `%${likePrefix(text)}`

/**
 * The query's words as a prefix tsquery ('acme':* & 'cor':*), or null when it has none. One-letter
 * words are left out beside longer ones: their prefix matches most of the organization.
 */
export function wordQuery(text: string): string | null {
  const words = text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean)
  const useful = words.some((w) => w.length > 1) ? words.filter((w) => w.length > 1) : []
  return useful.length ? useful.map((w) => `'${w}':*`).join(' & ') : null
}

/** The list visibility of leads and deals (projections/leads.ts, opportunity-queries.ts); other kinds are org-wide. */
function visibleTo(viewer: Viewer, spec: KindSpec): RawBuilder<boolean> {
  if (!spec.restricted || viewer.isAdmin) return sql`true`
  if (viewer.profileId === null) return sql`false`
  return sql`(created_by = ${viewer.profileId} OR ${viewer.profileId}::uuid = ANY(assigned_to))`
}

type Search = { viewer: Viewer; text: string; perKind: number }

// The kind is a literal, so the planner picks the kind's partial indexes (projections/search.ts).
const ofKind = (s: Search, spec: KindSpec) => sql`org_id = ${s.viewer.orgId} AND kind = ${sql.lit(spec.kind)} AND ${visibleTo(s.viewer, spec)}`
const shown = sql`kind AS type, id, title, coalesce(account_name, subtitle) AS subtitle`

function rankedTiers(s: Search, spec: KindSpec, words: string | null): RawBuilder<SearchHit> {
  const prefixes = sql`SELECT id, 3 AS tier FROM search_documents WHERE ${ofKind(s, spec)} AND lower(names) COLLATE "C" LIKE ${likePrefix(s.text.toLowerCase())}
    ORDER BY lower(names) COLLATE "C" LIMIT ${s.perKind}`
  const wordMatches = words === null ? sql`` : sql`UNION ALL (SELECT id, 1 FROM search_documents WHERE ${ofKind(s, spec)} AND tsv @@ to_tsquery('simple', ${words}) LIMIT ${WORD_CANDIDATES})`
  const rank = words === null ? sql`0` : sql`ts_rank(d.tsv, to_tsquery('simple', ${words}))`
  return sql<SearchHit>`(SELECT d.kind AS type, d.id, d.title, coalesce(d.account_name, d.subtitle) AS subtitle, max(c.tier) + ${rank} AS score
    FROM ((${prefixes}) ${wordMatches}) c JOIN search_documents d ON d.id = c.id
    GROUP BY d.id ORDER BY score DESC, lower(d.title), d.id LIMIT ${s.perKind})`
}

function fuzzy(s: Search, spec: KindSpec, missing: number, found: string[]): RawBuilder<SearchHit> {
  const text = s.text.toLowerCase()
  return sql<SearchHit>`(SELECT ${shown}, word_similarity(${text}, names) AS score FROM search_documents
    WHERE ${ofKind(s, spec)} AND (${text} <% names OR names ILIKE ${likeContains(text)}) AND id <> ALL(${found}::uuid[])
    ORDER BY score DESC, lower(title), id LIMIT ${missing})`
}

const unionAll = (parts: RawBuilder<SearchHit>[]) => sql.join(parts, sql` UNION ALL `)
const number = (hits: SearchHit[]) => hits.map((h) => ({ ...h, score: Number(h.score) }))

/**
 * Up to `perKind` hits of each kind for `text` (trimmed, at least MIN_QUERY characters), best
 * first. One statement for the ranked tiers; a second, for the kinds still short of `perKind`,
 * only when the query is long enough for trigrams and pg_trgm is installed.
 */
export async function searchRecords(db: Kysely<any>, viewer: Viewer, text: string, perKind: number): Promise<SearchHit[]> {
  const s: Search = { viewer, text, perKind }
  const words = text.length >= MIN_FUZZY ? wordQuery(text) : null
  const ranked = number((await sql<SearchHit>`${unionAll(KIND_SPECS.map((spec) => rankedTiers(s, spec, words)))}`.execute(db)).rows)
  let hits = ranked
  if (text.length >= MIN_FUZZY && (await trigramsOf(db))) {
    const short = KIND_SPECS.map((spec) => ({ spec, found: ranked.filter((h) => h.type === spec.kind).map((h) => h.id) })).filter(({ found }) => found.length < perKind)
    if (short.length) hits = [...ranked, ...number((await sql<SearchHit>`${unionAll(short.map(({ spec, found }) => fuzzy(s, spec, perKind - found.length, found)))}`.execute(db)).rows)]
  }
  const order = (kind: SearchKind) => KIND_SPECS.findIndex((spec) => spec.kind === kind)
  return hits.sort((a, b) => b.score - a.score || order(a.type) - order(b.type))
}
