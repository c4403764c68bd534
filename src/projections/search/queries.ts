import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import type { Viewer } from '../opportunity/queries.ts'
import { hasTrigrams, partitionOf, viewerWord } from './search.ts'
import type { SearchKindSpec as KindSpec } from './search-documents.ts'
import { ruleFor, visibleSql } from '../../visibility/policy.ts'
import type { Db } from '../../db/database.ts'

/**
 * Global search's query: a handful of the best matches of each kind, org-scoped and filtered by
 * what the viewer may see in that kind's list. Matches come in tiers, each read from an index and
 * bounded, so a query matching half the organization costs what one matching a handful does:
 *   3  the record's name starts with the query (whole-name prefix, in name order);
 *   1  every word of the query starts a word of the record (full-text prefix search over names,
 *      emails, companies, descriptions; up to WORD_CANDIDATES of them, ranked by ts_rank, names
 *      weighing more);
 *   0  still short of a handful: names containing the query, or close to it (pg_trgm, typos;
 *      up to FUZZY_CANDIDATES of them, ranked by word similarity).
 * A hit's score is its best tier plus its rank within it; the answer is ordered by score.
 */
export type SearchHit = { type: string; id: string; title: string; subtitle: string; score: number }

/** Queries shorter than this match nearly everything (the original's floor too): no search. */
export const MIN_QUERY = 2
/** Full-text candidates ranked per kind: enough to rank well, bounded however many records match. */
const WORD_CANDIDATES = 50
/** Trigram candidates per kind: a fragment like "ndustr" is in thousands of names. */
const FUZZY_CANDIDATES = 50
/** Fuzzy matching needs a trigram of the query's own. */
const MIN_FUZZY = 3

const trigramsByDb = new WeakMap<Db, Promise<boolean>>()
const trigramsOf = (db: Db): Promise<boolean> => {
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

/** The kind's list visibility (visibility/policy.ts), over the document's own created_by and assigned_to. */
const visibleTo = (viewer: Viewer, spec: KindSpec): RawBuilder<boolean> => visibleSql(spec.visibility, viewer)

/**
 * The same visibility as a word of the document (projections/search/search.ts `viewers`): a member's
 * match is then one GIN lookup that intersects the query's words with the member's records,
 * instead of fetching every record that matches and dropping those of others (all 1,111 matches
 * of "acme corp" when none is the member's). Null when the kind needs no such word for the viewer.
 */
function visibilityWord(viewer: Viewer, spec: KindSpec): RawBuilder<string> | null {
  if (ruleFor(spec.visibility, viewer) !== 'involved' || viewer.profileId === null) return null
  return sql<string>`quote_literal(${viewerWord(viewer.profileId)})::tsquery`
}

type Search = { viewer: Viewer; text: string; perKind: number }

// Each kind is read from its own partition, planned with its own statistics (projections/search/search.ts).
const table = (spec: KindSpec) => sql.id(partitionOf(spec.kind))
const ofKind = (s: Search, spec: KindSpec) => sql`org_id = ${s.viewer.orgId} AND ${visibleTo(s.viewer, spec)}`
const shown = sql`kind AS type, id, title, coalesce(account_name, subtitle) AS subtitle`

/** Tier 3: names starting with the text, in name order (a range of the name index, read in order). */
function prefixes(s: Search, spec: KindSpec, words: string | null): RawBuilder<SearchHit> {
  return sql<SearchHit>`(SELECT ${shown}, 3 + ${rankOf(words)} AS score FROM ${table(spec)}
    WHERE ${ofKind(s, spec)} AND lower(names) COLLATE "C" LIKE ${likePrefix(s.text.toLowerCase())} ORDER BY lower(names) COLLATE "C" LIMIT ${s.perKind})`
}

/** Tier 1: up to WORD_CANDIDATES records holding every word, the best ranked of them. */
function wordMatches(s: Search, spec: KindSpec, words: string): RawBuilder<SearchHit> {
  const visible = visibilityWord(s.viewer, spec)
  const query = visible ? sql`(to_tsquery('simple', ${words}) && ${visible})` : sql`to_tsquery('simple', ${words})`
  return sql<SearchHit>`(SELECT ${shown}, 1 + ${rankOf(words)} AS score
    FROM (SELECT * FROM ${table(spec)} WHERE ${ofKind(s, spec)} AND tsv @@ ${query} LIMIT ${WORD_CANDIDATES}) candidates
    ORDER BY score DESC, lower(title), id LIMIT ${s.perKind})`
}

const rankOf = (words: string | null) => (words === null ? sql`0` : sql`ts_rank(tsv, to_tsquery('simple', ${words}))`)

/** Tier 0: names containing the text, or a word close to it (pg_trgm word similarity): up to FUZZY_CANDIDATES, the most similar of them. */
function fuzzy(s: Search, spec: KindSpec, missing: number, found: string[]): RawBuilder<SearchHit> {
  const text = s.text.toLowerCase()
  // A member's viewer word is the trigram index's second column: one index scan yields only their records.
  const viewer = visibilityWord(s.viewer, spec) && s.viewer.profileId ? sql`AND viewers @> ARRAY[${viewerWord(s.viewer.profileId)}]::text[]` : sql``
  return sql<SearchHit>`(SELECT ${shown}, word_similarity(${text}, names) AS score
    FROM (SELECT * FROM ${table(spec)} WHERE ${ofKind(s, spec)} AND (${text} <% names OR names ILIKE ${likeContains(text)}) ${viewer} AND id <> ALL(${found}::uuid[]) LIMIT ${FUZZY_CANDIDATES}) candidates
    ORDER BY score DESC, lower(title), id LIMIT ${missing})`
}

/**
 * Up to `perKind` hits of each of the `kinds` (the manifests' declarations, in the palette's order:
 * modules/search.ts) for `text` (trimmed, at least MIN_QUERY characters), best
 * first. One statement per tier (each a UNION ALL over the kinds), in one transaction; the trigram
 * tier only for the kinds still short of `perKind`, for a text of MIN_FUZZY characters or more,
 * where pg_trgm is installed.
 */
export async function searchRecords(db: Db, kinds: readonly KindSpec[], viewer: Viewer, text: string, perKind: number): Promise<SearchHit[]> {
  const s: Search = { viewer, text, perKind }
  const words = text.length >= MIN_FUZZY ? wordQuery(text) : null
  const trigrams = text.length >= MIN_FUZZY && (await trigramsOf(db))
  const hits = await db.transaction().execute(async (trx) => {
    const found = await run(trx, kinds.map((spec) => prefixes(s, spec, words)))
    if (words === null && !trigrams) return found
    // The word and trigram tiers are read from their GIN indexes only. The planner cannot tell how
    // many records a prefix query matches (it guesses a fixed share) and, to stop after the first
    // WORD_CANDIDATES, would scan the partition (or the name index) in order: fine for a word
    // every record holds, a whole scan for one that none holds. A bitmap of the GIN index answers
    // both in bounded time.
    await sql`SELECT set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true)`.execute(trx)
    if (words !== null) found.push(...(await run(trx, kinds.map((spec) => wordMatches(s, spec, words)))))
    const best = bestPerKind(kinds, found, perKind)
    if (!trigrams) return best
    const short = kinds.map((spec) => ({ spec, ids: best.filter((h) => h.type === spec.kind).map((h) => h.id) })).filter(({ ids }) => ids.length < perKind)
    return short.length ? [...best, ...(await run(trx, short.map(({ spec, ids }) => fuzzy(s, spec, perKind - ids.length, ids))))] : best
  })
  return bestPerKind(kinds, hits, perKind)
}

async function run(db: Db, parts: RawBuilder<SearchHit>[]): Promise<SearchHit[]> {
  const { rows } = await sql<SearchHit>`${sql.join(parts, sql` UNION ALL `)}`.execute(db)
  return rows.map((hit) => ({ ...hit, score: Number(hit.score) }))
}

/** Each record once, at its best tier; the best `perKind` of each kind; best first (ties: in kind order). */
function bestPerKind(kinds: readonly KindSpec[], hits: SearchHit[], perKind: number): SearchHit[] {
  const order = (kind: string) => kinds.findIndex((spec) => spec.kind === kind)
  const byScore = [...hits].sort((a, b) => b.score - a.score || order(a.type) - order(b.type))
  const seen = new Set<string>()
  const taken = new Map<string, number>()
  return byScore.filter((hit) => {
    if (seen.has(hit.id) || (taken.get(hit.type) ?? 0) >= perKind) return false
    seen.add(hit.id)
    taken.set(hit.type, (taken.get(hit.type) ?? 0) + 1)
    return true
  })
}
