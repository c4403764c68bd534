import { sql } from 'kysely'
import type { RawBuilder } from 'kysely'
import { visibleSql } from '../../visibility/policy.ts'

/**
 * A board card (§2.4) written as JSON by PostgreSQL, for the live board: 600 cards parsed into rows,
 * built into objects and serialized again cost the Node process ~30 ms of CPU per board (a third of
 * it garbage collection), which 8 clients queue behind on one event loop. Here each column arrives as
 * one row: its cards' JSON text, joined. A kanban_order is written by PostgreSQL where its float8
 * text is what JavaScript's `String(number)` (a JSON serializer) writes: shortest round-trip digits
 * in plain notation, for 0 and 1e-4 ≤ |order| < 1e15. Outside that range (exponent notation in
 * PostgreSQL, which JavaScript writes otherwise up to 1e21) the card holds a placeholder, U+0001,
 * which JSON text never holds raw (row_to_json escapes control characters), and the column's row
 * carries those orders as numbers, for Node to write in their places.
 *
 * Every value is what http/opportunities/opportunity-views.ts `cardOf` writes, in the schema's
 * field order: the same relations (an account of the organization even if deleted, live tags and
 * the organization's profiles in the deal's order, live line items by position), instants as
 * `toISOString()` writes them (UTC, milliseconds truncated, as node-postgres parses them), aging
 * from whole days since the stage change truncated to milliseconds (aging.ts), can_move by
 * the visibility policy (visibility/policy.ts). In tests the route also builds the board the object way and requires the
 * same bytes (opportunity-lists.ts), so the two cannot drift apart.
 */
export type CardColumnRow = { stage_id: string; items: string; orders: number[] | null; days_change_at: number | null }

const PLACEHOLDER = '\u0001'

/** The column's cards as JSON text (without the brackets), each placeholder replaced by its order as JavaScript writes it. */
export function columnItems(row: CardColumnRow): string {
  if (!row.orders) return row.items
  const parts = row.items.split(PLACEHOLDER)
  return parts.map((part, i) => (i === 0 ? part : String(row.orders![i - 1]) + part)).join('')
}

export type CardJsonViewer = { orgId: string; profileId: string | null; isAdmin: boolean }

const iso = (instant: RawBuilder<unknown>) => sql<string | null>`to_char(${instant} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
/** `[a,b]` from JSON texts in order, `[]` for none; `::json` so row_to_json embeds it as it is. */
const jsonArray = (element: RawBuilder<unknown>, order: RawBuilder<unknown>, from: RawBuilder<unknown>) => sql`(SELECT coalesce('[' || string_agg(${element}, ',' ORDER BY ${order}) || ']', '[]')::json FROM ${from})`

const CARD_HEAD = sql`(SELECT row_to_json(r) FROM (SELECT c.id, c.name, c.pipeline_id AS pipeline, c.stage, c.stage_label, c.stage_kind, c.amount::text AS amount,
    c.amount::text AS opportunity_amount, c.currency, c.probability, c.closed_on) r)`

/** The limited card rows `c` of every column (queries.ts boardDeals) as one row per column. */
export function cardColumns(viewer: CardJsonViewer, now: Date): (limited: RawBuilder<unknown>) => RawBuilder<unknown> {
  const order = sql`c.kanban_order <> 0 AND abs(c.kanban_order) >= 1e-4 AND abs(c.kanban_order) < 1e15`
  const orderText = sql`CASE WHEN c.kanban_order = 0 THEN '0' WHEN ${order} THEN c.kanban_order::text ELSE ${PLACEHOLDER} END`
  const card = sql`left(${CARD_HEAD}::text, -1) || ',"kanban_order":' || ${orderText} || ',' || substr(${cardTail(viewer, now)}::text, 2)`
  return (limited) => sql`SELECT j.stage_id, string_agg(j.card, ',' ORDER BY j.kanban_order, j.id) AS items, array_agg(j.kanban_order ORDER BY j.kanban_order, j.id) FILTER (WHERE j.placeholder) AS orders,
      min(j.days_change_at)::float8 AS days_change_at
    FROM (SELECT c.stage_id, c.kanban_order, c.id, ${card} AS card, NOT (c.kanban_order = 0 OR ${order}) AS placeholder, ${daysChangeAt(now)} AS days_change_at FROM ${limited}) j GROUP BY j.stage_id`
}

/** The card's stage change instant in epoch ms, truncated to milliseconds as node-postgres reads it (aging.ts). */
const stageChangedMs = sql`floor(extract(epoch FROM c.stage_changed_at) * 1000)`
/** Whole days in stage as aging.ts daysSince counts them, never below 0 (null without a stage change). */
const daysInStage = (now: Date) => sql`greatest(0, floor((${now.getTime()}::numeric - ${stageChangedMs}) / 86400000))::int`
/** When the card's days in stage (and so its aging) next change, in epoch ms (aging.ts daysChangeAt): the board holds until its first card's. */
const daysChangeAt = (now: Date) => sql`${stageChangedMs} + (${daysInStage(now)} + 1) * 86400000::numeric`

function cardTail(viewer: CardJsonViewer, now: Date): RawBuilder<unknown> {
  const { orgId } = viewer
  const canMove = sql`coalesce(${visibleSql('Opportunity', viewer, 'c')}, false)`
  const profile = sql`row_to_json(r)::text, a.n FROM unnest(c.assigned_to) WITH ORDINALITY AS a(id, n)
    JOIN profiles p ON p.id = a.id AND p.org_id = ${orgId} JOIN users u ON u.id = p.user_id
    CROSS JOIN LATERAL (SELECT p.id, u.email, u.first_name, u.last_name, p.role, p.is_active,
      (SELECT row_to_json(d) FROM (SELECT u.id, u.email, u.first_name, u.last_name, '' AS profile_pic) d) AS user_details) r`
  const tag = sql`row_to_json(r)::text, a.n FROM unnest(c.tags) WITH ORDINALITY AS a(id, n)
    JOIN tags t ON t.id = a.id AND t.org_id = ${orgId} AND NOT t.is_deleted CROSS JOIN LATERAL (SELECT t.id, t.name, t.color) r`
  const item = sql`row_to_json(r)::text, i.position, i.id FROM opportunity_line_items i
    CROSS JOIN LATERAL (SELECT i.id, i.name, i.quantity::text AS quantity, i.unit_price::text AS unit_price, i.discount_type, i.discount_value::text AS discount_value) r
    WHERE i.opportunity_id = c.id AND NOT i.is_deleted`
  // Whole days as aging.ts daysSince counts them: from the instant truncated to milliseconds, never below 0.
  const days = sql`CASE WHEN c.stage_changed_at IS NOT NULL THEN ${daysInStage(now)} END`
  const aging = sql`CASE WHEN c.stage_kind IS DISTINCT FROM 'open' THEN NULL WHEN d.days IS NULL THEN 'green'
    WHEN c.expected_days IS NOT NULL AND d.days >= ceil(c.expected_days * 1.5) THEN 'red'
    WHEN d.days >= coalesce(c.warning_days, c.expected_days) THEN 'yellow' ELSE 'green' END`
  return sql`(SELECT row_to_json(r) FROM (SELECT
      (SELECT row_to_json(x) FROM (SELECT a.id, a.name FROM accounts a WHERE a.org_id = ${orgId} AND a.id = c.account) x) AS account,
      ${jsonArray(sql`p.ref`, sql`p.n`, sql`(SELECT ${profile}) p(ref, n)`)} AS assigned_to,
      ${jsonArray(sql`t.ref`, sql`t.n`, sql`(SELECT ${tag}) t(ref, n)`)} AS tags,
      ${jsonArray(sql`l.ref`, sql`l.position, l.id`, sql`(SELECT ${item}) l(ref, position, id)`)} AS line_items,
      d.days AS days_in_stage, ${aging} AS aging_status, ${iso(sql`c.stage_changed_at`)} AS stage_changed_at, NULL AS next_activity,
      ${canMove} AS can_move, ${iso(sql`c.created_at`)} AS created_at, ${iso(sql`c.updated_at`)} AS updated_at
    FROM (SELECT ${days} AS days) d) r)`
}
