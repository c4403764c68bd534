import { sql } from 'kysely'
import type { Kysely, RawBuilder, SelectQueryBuilder } from 'kysely'
import { goalStreams } from '../commands/goal/goal.ts'
import type { GoalEvent, GoalFields } from '../commands/goal/goal.ts'
import { opportunityStreams } from '../commands/opportunity/opportunity.ts'
import type { OpportunityEvent } from '../commands/opportunity/opportunity.ts'
import { domainEventOf } from './projector.ts'
import type { Projector } from './projector.ts'

/**
 * The goals read model: one row per live goal (a deleted goal leaves none), and the won-deal
 * ledger its progress is summed from: one row per deal with what crediting a win needs, copied
 * from the deal's own events (a read model never reads another one's tables while applying, so it
 * rebuilds alone). `won` follows the KIND of the stage the deal is in (OpportunityCreated's
 * stage_kind, then each OpportunityStageChanged's `to.stage_kind`), never its code, so a renamed
 * code or a custom won stage counts, and a deal moved out of won stops counting. `credited` is who
 * a win counts for: the assignees, or the creator while nobody is assigned. Every statement sets
 * values, so applying an event twice changes nothing.
 */
export type GoalRow = GoalFields & { id: string; org_id: string; created_by: string | null; created_at: Date; updated_at: Date }

export type GoalDealRow = {
  deal_id: string
  org_id: string
  amount: string | null
  currency: string | null
  closed_on: string | null
  assigned_to: string[]
  created_by: string | null
  won: boolean
  is_deleted: boolean
}

type Tables = { goals: GoalRow; goal_deals: GoalDealRow }

const GOAL_EVENTS = ['GoalSet', 'GoalChanged', 'GoalDeleted']
const DEAL_EVENTS = ['OpportunityCreated', 'OpportunityUpdated', 'OpportunityStageChanged', 'OpportunityDeleted']
/** The deal fields the ledger copies from OpportunityUpdated. */
const LEDGER_FIELDS = ['amount', 'currency', 'closed_on', 'assigned_to'] as const

async function createTables(db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE goals (id uuid PRIMARY KEY, org_id uuid NOT NULL, name text NOT NULL, owner_type text NOT NULL, owner_id uuid NOT NULL,
    period_start date NOT NULL, period_end date NOT NULL, target_amount numeric(15, 2) NOT NULL, currency text NOT NULL, created_by uuid,
    created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`.execute(db)
  await sql`CREATE INDEX goals_org_period ON goals (org_id, period_start DESC, period_end)`.execute(db)
  await sql`CREATE TABLE goal_deals (deal_id uuid PRIMARY KEY, org_id uuid NOT NULL, amount numeric(15, 2), currency text, closed_on date,
    assigned_to uuid[] NOT NULL, created_by uuid, won boolean NOT NULL, is_deleted boolean NOT NULL DEFAULT false,
    credited uuid[] GENERATED ALWAYS AS (CASE WHEN cardinality(assigned_to) > 0 THEN assigned_to WHEN created_by IS NULL THEN '{}'::uuid[] ELSE ARRAY[created_by] END) STORED)`.execute(db)
  await sql`CREATE INDEX goal_deals_won ON goal_deals (org_id, closed_on) WHERE won AND NOT is_deleted`.execute(db)
}

async function applyGoal(db: Kysely<Tables>, id: string, event: GoalEvent): Promise<void> {
  const at = new Date(event.data.at)
  switch (event.type) {
    case 'GoalSet': {
      const { goal_id: _id, at: _at, ...row } = event.data
      await db.insertInto('goals').values({ ...row, id, created_at: at, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
      return
    }
    case 'GoalChanged':
      await db.updateTable('goals').set({ ...event.data.changes, updated_at: at }).where('id', '=', id).execute()
      return
    case 'GoalDeleted':
      await db.deleteFrom('goals').where('id', '=', id).execute()
  }
}

async function applyDeal(db: Kysely<Tables>, id: string, event: OpportunityEvent): Promise<void> {
  switch (event.type) {
    case 'OpportunityCreated': {
      const { org_id, amount, currency, closed_on, assigned_to, created_by, stage_kind } = event.data
      await db.insertInto('goal_deals').values({ deal_id: id, org_id, amount, currency, closed_on, assigned_to, created_by, won: stage_kind === 'won', is_deleted: false }).onConflict((oc) => oc.column('deal_id').doNothing()).execute()
      return
    }
    case 'OpportunityUpdated': {
      const changes = Object.fromEntries(LEDGER_FIELDS.filter((key) => key in event.data.changes).map((key) => [key, event.data.changes[key]!.to]))
      if (Object.keys(changes).length) await db.updateTable('goal_deals').set(changes).where('deal_id', '=', id).execute()
      return
    }
    case 'OpportunityStageChanged':
      await db.updateTable('goal_deals').set({ won: event.data.to.stage_kind === 'won' }).where('deal_id', '=', id).execute()
      return
    case 'OpportunityDeleted':
      await db.updateTable('goal_deals').set({ is_deleted: true }).where('deal_id', '=', id).execute()
  }
}

export const goalsProjector: Projector = {
  name: 'goals',
  version: 1,
  eventTypes: [...GOAL_EVENTS, ...DEAL_EVENTS],
  tables: ['goals', 'goal_deals'],
  createTables,
  apply: (trx, recorded) =>
    GOAL_EVENTS.includes(recorded.type)
      ? applyGoal(trx as unknown as Kysely<Tables>, goalStreams.idOf(recorded.streamName), domainEventOf<GoalEvent>(recorded))
      : applyDeal(trx as unknown as Kysely<Tables>, opportunityStreams.idOf(recorded.streamName), domainEventOf<OpportunityEvent>(recorded)),
}

// Queries read this projection's tables with the identity tables (profiles, users, organizations: a
// deal recorded without a currency counts in the organization's default) and the teams read model
// (a team goal counts the team's current members).

/** A goal as answered: its owner's name (null once a team is deleted) and its progress, summed in SQL numeric. */
export type GoalView = Omit<GoalRow, 'created_at' | 'updated_at'> & { owner_name: string | null; achieved_amount: string; progress_percent: string; won_deals_count: number }

/** A profile's display name: first and last name, or the email while both are blank. */
const profileName = (user: string) => sql<string>`coalesce(nullif(trim(${sql.ref(`${user}.first_name`)} || ' ' || ${sql.ref(`${user}.last_name`)}), ''), ${sql.ref(`${user}.email`)})`

/** The won deals of the org (in `currency`, closed on a date between the bounds, inclusive): the ledger rows a sum reads. */
const wonIn = (from: RawBuilder<unknown>, to: RawBuilder<unknown>, currency: RawBuilder<unknown>, orgId: RawBuilder<unknown>) => sql<boolean>`d.org_id = ${orgId} AND d.won AND NOT d.is_deleted AND d.amount IS NOT NULL
  AND d.closed_on BETWEEN ${from} AND ${to}
  AND coalesce(d.currency, (SELECT o.default_currency FROM organizations o WHERE o.id = d.org_id)) = ${currency}`

/** Which deals a goal's owner is credited with: the profile among `credited`, or any current member of the team. */
const creditedToOwner = sql<boolean>`CASE WHEN g.owner_type = 'profile' THEN g.owner_id = ANY (d.credited)
  ELSE EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = g.owner_id AND m.profile_id = ANY (d.credited)) END`

function goalQuery(db: Kysely<any>, orgId: string): SelectQueryBuilder<any, any, object> {
  return (db as Kysely<Tables>).selectFrom('goals as g').where('g.org_id', '=', orgId)
}

function withProgress(query: SelectQueryBuilder<any, any, object>) {
  return query
    .select(['g.id', 'g.org_id', 'g.name', 'g.owner_type', 'g.owner_id', 'g.target_amount', 'g.currency', 'g.created_by'])
    .select([
      sql<string>`g.period_start::text`.as('period_start'),
      sql<string>`g.period_end::text`.as('period_end'),
      sql<string | null>`CASE WHEN g.owner_type = 'profile'
        THEN (SELECT ${profileName('u')} FROM profiles p JOIN users u ON u.id = p.user_id WHERE p.id = g.owner_id AND p.org_id = g.org_id)
        ELSE (SELECT t.name FROM teams t WHERE t.id = g.owner_id AND t.org_id = g.org_id) END`.as('owner_name'),
      sql<string>`progress.achieved::text`.as('achieved_amount'),
      sql<string>`round(progress.achieved * 100 / g.target_amount, 1)::text`.as('progress_percent'),
      sql<number>`progress.deals`.as('won_deals_count'),
    ])
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('goal_deals as d')
          .select([sql<string>`round(coalesce(sum(d.amount), 0), 2)`.as('achieved'), sql<number>`count(*)::int`.as('deals')])
          .where(wonIn(sql.ref('g.period_start'), sql.ref('g.period_end'), sql.ref('g.currency'), sql.ref('g.org_id')))
          .where(creditedToOwner)
          .as('progress'),
      (join) => join.onTrue(),
    )
}

export type GoalFilter = { limit: number; offset: number; /** Only goals whose period ended before this date (YYYY-MM-DD). */ endedBefore?: string }

/** One page of the org's goals: newest period first (ended ones by end date, newest first), then by name. */
export async function listGoals(db: Kysely<any>, orgId: string, filter: GoalFilter): Promise<{ count: number; rows: GoalView[] }> {
  let query = goalQuery(db, orgId)
  if (filter.endedBefore !== undefined) query = query.where('g.period_end', '<', sql<string>`${filter.endedBefore}::date`)
  const first = filter.endedBefore === undefined ? sql`g.period_start DESC` : sql`g.period_end DESC`
  const [rows, total] = await Promise.all([
    withProgress(query).orderBy(first).orderBy(sql`lower(g.name)`).orderBy('g.id').limit(filter.limit).offset(filter.offset).execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { count: Number((total as { n: string }).n), rows: rows as GoalView[] }
}

/** A goal of the organization with its progress, or undefined: another org's id looks exactly like a missing one. */
export async function goalOf(db: Kysely<any>, orgId: string, id: string): Promise<GoalView | undefined> {
  return (await withProgress(goalQuery(db, orgId).where('g.id', '=', id)).executeTakeFirst()) as GoalView | undefined
}

export type LeaderboardRow = { profile_id: string; name: string; won_amount: string; won_deals_count: number }

/**
 * The profiles credited with won deals closed in the period in `currency`, by won amount (highest
 * first), ties by name then id. A deal with several assignees counts in full for each of them.
 */
export function leaderboard(db: Kysely<any>, orgId: string, period: { from: string; to: string; currency: string }): Promise<LeaderboardRow[]> {
  return sql<LeaderboardRow>`SELECT p.id AS profile_id, ${profileName('u')} AS name, round(sum(d.amount), 2)::text AS won_amount, count(*)::int AS won_deals_count
    FROM goal_deals d
    CROSS JOIN LATERAL unnest(d.credited) AS c(profile_id)
    JOIN profiles p ON p.id = c.profile_id AND p.org_id = d.org_id
    JOIN users u ON u.id = p.user_id
    WHERE ${wonIn(sql`${period.from}::date`, sql`${period.to}::date`, sql`${period.currency}`, sql`${orgId}::uuid`)}
    GROUP BY p.id, u.first_name, u.last_name, u.email
    ORDER BY sum(d.amount) DESC, lower(${profileName('u')}), p.id`
    .execute(db)
    .then((result) => result.rows)
}
