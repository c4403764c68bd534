import { sql } from 'kysely'
import type { SelectQueryBuilder } from 'kysely'
import { goalStreams } from '../../commands/goal/goal.ts'
import type { GoalEvent } from '../../commands/goal/goal.ts'
import { opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import type { OpportunityEvent } from '../../commands/opportunity/opportunity.ts'
import type { FreshTables } from '../../db/copy-rows.ts'
import { insertRowsOnce, updateRows } from '../../db/insert-rows.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'
import { applyInRuns } from '../kernel/projector.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import type { GoalRow } from './tables.ts'
import type { Db } from '../../db/database.ts'

export type { GoalDealRow, GoalRow } from './tables.ts'

const GOAL_EVENTS = ['GoalSet', 'GoalChanged', 'GoalDeleted']
const DEAL_EVENTS = ['OpportunityCreated', 'OpportunityUpdated', 'OpportunityStageChanged', 'OpportunityDeleted']
/** The deal fields the ledger copies from OpportunityUpdated. */
const LEDGER_FIELDS = ['amount', 'currency', 'closed_on', 'assigned_to'] as const

async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE goals (id uuid PRIMARY KEY, org_id uuid NOT NULL, name text NOT NULL, goal_type text NOT NULL, owner_type text NOT NULL, owner_id uuid,
    period_type text NOT NULL, period_start date NOT NULL, period_end date NOT NULL, target_amount numeric(15, 2) NOT NULL, currency text NOT NULL,
    is_active boolean NOT NULL, created_by uuid, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`.execute(db)
  await sql`CREATE INDEX goals_org_created ON goals (org_id, created_at DESC)`.execute(db)
  await sql`CREATE TABLE goal_deals (deal_id uuid PRIMARY KEY, org_id uuid NOT NULL, amount numeric(15, 2), currency text, closed_on date,
    assigned_to uuid[] NOT NULL, created_by uuid, won boolean NOT NULL, is_deleted boolean NOT NULL DEFAULT false,
    credited uuid[] GENERATED ALWAYS AS (CASE WHEN cardinality(assigned_to) > 0 THEN assigned_to WHEN created_by IS NULL THEN '{}'::uuid[] ELSE ARRAY[created_by] END) STORED)`.execute(db)
  await sql`CREATE INDEX goal_deals_won ON goal_deals (org_id, closed_on) WHERE won AND NOT is_deleted`.execute(db)
}

async function applyGoal(db: Db, id: string, event: GoalEvent): Promise<void> {
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

type CreatedDeal = { id: string; event: Extract<OpportunityEvent, { type: 'OpportunityCreated' }> }

/** Deals enter the ledger in one statement however many (a page of creates under load, a replay). */
async function insertCreatedDeals(db: Db, deals: readonly CreatedDeal[], fresh?: FreshTables): Promise<void> {
  const rows = deals.map(({ id, event: { data } }) => ({ deal_id: id, org_id: data.org_id, amount: data.amount, currency: data.currency, closed_on: data.closed_on, assigned_to: data.assigned_to, created_by: data.created_by, won: data.stage_kind === 'won', is_deleted: false }))
  await insertRowsOnce(db, 'goal_deals', 'deal_id', rows, fresh)
}

/** A deal's creation: its run statement is the INSERT `apply` sends for one (applyInRuns' anyLength). */
const isCreation = (event: RecordedEvent) => event.type === 'OpportunityCreated'

/** The ledger columns a change of a deal sets. */
function columnsSet(event: Exclude<OpportunityEvent, { type: 'OpportunityCreated' }>): Record<string, unknown> {
  switch (event.type) {
    case 'OpportunityUpdated':
      return Object.fromEntries(LEDGER_FIELDS.filter((key) => key in event.data.changes).map((key) => [key, event.data.changes[key]!.to]))
    case 'OpportunityStageChanged':
      return { won: event.data.to.stage_kind === 'won' }
    case 'OpportunityDeleted':
      return { is_deleted: true }
    default:
      return {}
  }
}

/** Each deal's columns as a run of changes leaves them, a later change's value winning. */
function finalColumns(run: readonly RecordedEvent[]): { key: string; set: Record<string, unknown> }[] {
  const deals = new Map<string, Record<string, unknown>>()
  for (const recorded of run) {
    const id = opportunityStreams.idOf(recorded.streamName)
    deals.set(id, { ...deals.get(id), ...columnsSet(domainEventOf<Exclude<OpportunityEvent, { type: 'OpportunityCreated' }>>(recorded)) })
  }
  return [...deals].filter(([, set]) => Object.keys(set).length).map(([key, set]) => ({ key, set }))
}

async function applyDeal(db: Db, id: string, event: OpportunityEvent): Promise<void> {
  if (event.type === 'OpportunityCreated') return insertCreatedDeals(db, [{ id, event }])
  const set = columnsSet(event)
  if (Object.keys(set).length) await db.updateTable('goal_deals').set(set).where('deal_id', '=', id).execute()
}

export const goalsProjector: Projector = {
  name: 'goals',
  // 2: goal_type, period_type, is_active and whole-organization goals (owner_id null).
  version: 2,
  eventTypes: [...GOAL_EVENTS, ...DEAL_EVENTS],
  tables: ['goals', 'goal_deals'],
  createTables,
  apply: (trx, recorded) =>
    GOAL_EVENTS.includes(recorded.type)
      ? applyGoal(trx, goalStreams.idOf(recorded.streamName), domainEventOf<GoalEvent>(recorded))
      : applyDeal(trx, opportunityStreams.idOf(recorded.streamName), domainEventOf<OpportunityEvent>(recorded)),
  // Deal events come in runs (concurrent writes share a page; a replay is mostly creates): the
  // creations in one INSERT, then every other deal's final columns in one UPDATE (a deal's changes
  // come after its creation in the log). A rebuild's creations are a COPY into its fresh tables.
  applyBatch: (trx, events, fresh) =>
    applyInRuns(
      events,
      (event) => DEAL_EVENTS.includes(event.type),
      async (run) => {
        const created = run.filter((e) => e.type === 'OpportunityCreated')
        if (created.length) await insertCreatedDeals(trx, created.map((recorded) => ({ id: opportunityStreams.idOf(recorded.streamName), event: domainEventOf<CreatedDeal['event']>(recorded) })), fresh)
        await updateRows(trx, 'goal_deals', 'deal_id', finalColumns(run.filter((e) => e.type !== 'OpportunityCreated')))
      },
      (event) => goalsProjector.apply(trx, event),
      isCreation,
    ),
}

// Queries read this projection's tables with the identity tables (profiles, users, organizations: a
// deal recorded without a currency counts in the organization's default) and the teams read model
// (a team goal counts the team's current members).

/** The profile a goal is assigned to, as the original's ProfileSerializer nests it (assigned_to_detail). */
export type GoalProfileView = { id: string; user_id: string; email: string; first_name: string; last_name: string; role: string; is_active: boolean; phone: string; created_at: Date }

/**
 * A goal as answered, with its progress (computed in SQL numeric): `progress_value` is the won
 * amount in the goal's currency (REVENUE) or the number of won deals (DEALS_CLOSED), with 2
 * places; `progress_percent` is progress_value / target × 100, rounded down, at most 100.
 */
export type GoalView = Omit<GoalRow, 'period_start' | 'period_end'> & {
  period_start: string
  period_end: string
  profile: GoalProfileView | null
  team_name: string | null
  progress_value: string
  progress_percent: number
}

/** Which deals a goal's owner is credited with: the profile among `credited`, any current member of the team, or any (the organization). */
const creditedToOwner = sql<boolean>`CASE g.owner_type WHEN 'profile' THEN g.owner_id = ANY (d.credited)
  WHEN 'team' THEN EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = g.owner_id AND m.profile_id = ANY (d.credited))
  ELSE true END`

/** The goals a member may read (the original's rule): those assigned to them and their teams'. Admins read every goal. */
export const visibleTo = (profileId: string) => sql<boolean>`((g.owner_type = 'profile' AND g.owner_id = ${profileId})
  OR (g.owner_type = 'team' AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = g.owner_id AND m.profile_id = ${profileId})))`

function goalQuery(db: Db, orgId: string): SelectQueryBuilder<any, any, object> {
  return db.selectFrom('goals as g').where('g.org_id', '=', orgId)
}

function withProgress(query: SelectQueryBuilder<any, any, object>) {
  return query
    .leftJoin('profiles as ap', (join) => join.on(sql<boolean>`g.owner_type = 'profile' AND ap.id = g.owner_id AND ap.org_id = g.org_id`))
    .leftJoin('users as au', 'au.id', 'ap.user_id')
    .leftJoin('teams as t', (join) => join.on(sql<boolean>`g.owner_type = 'team' AND t.id = g.owner_id AND t.org_id = g.org_id`))
    .select(['g.id', 'g.org_id', 'g.name', 'g.goal_type', 'g.owner_type', 'g.owner_id', 'g.period_type', 'g.target_amount', 'g.currency', 'g.is_active', 'g.created_by', 'g.created_at', 'g.updated_at'])
    .select([
      sql<string>`g.period_start::text`.as('period_start'),
      sql<string>`g.period_end::text`.as('period_end'),
      sql<GoalProfileView | null>`CASE WHEN ap.id IS NULL THEN NULL ELSE json_build_object('id', ap.id, 'user_id', au.id, 'email', au.email, 'first_name', au.first_name, 'last_name', au.last_name,
        'role', ap.role, 'is_active', ap.is_active, 'phone', ap.phone, 'created_at', ap.created_at) END`.as('profile'),
      sql<string | null>`t.name`.as('team_name'),
      sql<string>`progress.value::text`.as('progress_value'),
      sql<number>`LEAST(floor(progress.value * 100 / g.target_amount), 100)::int`.as('progress_percent'),
    ])
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('goal_deals as d')
          .select(
            sql<string>`round(CASE WHEN g.goal_type = 'DEALS_CLOSED' THEN count(*)
              ELSE coalesce(sum(d.amount) FILTER (WHERE d.amount IS NOT NULL
                AND coalesce(d.currency, (SELECT o.default_currency FROM organizations o WHERE o.id = d.org_id)) = g.currency), 0) END, 2)`.as('value'),
          )
          .where(sql<boolean>`d.org_id = g.org_id AND d.won AND NOT d.is_deleted AND d.closed_on BETWEEN g.period_start AND g.period_end`)
          .where(creditedToOwner)
          .as('progress'),
      (join) => join.onTrue(),
    )
}

/** The profile JSON carries created_at as text: back to a Date, as the other rows carry it. */
const viewOf = (row: GoalView): GoalView => ({ ...row, profile: row.profile && { ...row.profile, created_at: new Date(row.profile.created_at) } })

export type GoalFilter = {
  limit: number
  offset: number
  /** A member's profile id: only the goals they may read (visibleTo); undefined for an admin. */
  viewer?: string
  /** Only goals whose period ended before this date (YYYY-MM-DD): the history. */
  endedBefore?: string
  /** Only goals whose period holds this date (YYYY-MM-DD). */
  current?: string
  active?: boolean
  assignedTo?: string
  team?: string
  periodType?: string
  search?: string
}

function filtered(db: Db, orgId: string, filter: Omit<GoalFilter, 'limit' | 'offset'>) {
  let query = goalQuery(db, orgId)
  if (filter.viewer !== undefined) query = query.where(visibleTo(filter.viewer))
  if (filter.endedBefore !== undefined) query = query.where('g.period_end', '<', sql<string>`${filter.endedBefore}::date`)
  if (filter.current !== undefined) query = query.where(sql<boolean>`${filter.current}::date BETWEEN g.period_start AND g.period_end`)
  if (filter.active !== undefined) query = query.where('g.is_active', '=', filter.active)
  if (filter.assignedTo !== undefined) query = query.where(sql<boolean>`g.owner_type = 'profile' AND g.owner_id = ${filter.assignedTo}`)
  if (filter.team !== undefined) query = query.where(sql<boolean>`g.owner_type = 'team' AND g.owner_id = ${filter.team}`)
  if (filter.periodType !== undefined) query = query.where('g.period_type', '=', filter.periodType)
  if (filter.search) query = query.where(sql<boolean>`g.name ILIKE ${`%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`)
  return query
}

/** One page of the org's goals: newest first (the history: latest end first), then by name. */
export async function listGoals(db: Db, orgId: string, filter: GoalFilter): Promise<{ count: number; rows: GoalView[] }> {
  const query = filtered(db, orgId, filter)
  const order = filter.endedBefore === undefined ? sql`g.created_at DESC` : sql`g.period_end DESC`
  const [rows, total] = await Promise.all([
    withProgress(query).orderBy(order).orderBy(sql`lower(g.name)`).orderBy('g.id').limit(filter.limit).offset(filter.offset).execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { count: Number((total as { n: string }).n), rows: (rows as GoalView[]).map(viewOf) }
}

/** A goal of the organization with its progress, or undefined: another org's id looks exactly like a missing one. */
export async function goalOf(db: Db, orgId: string, id: string): Promise<GoalView | undefined> {
  const row = (await withProgress(goalQuery(db, orgId).where('g.id', '=', id)).executeTakeFirst()) as GoalView | undefined
  return row && viewOf(row)
}

/** Whether a member may read the goal (visibleTo). */
export async function goalVisibleTo(db: Db, orgId: string, id: string, profileId: string): Promise<boolean> {
  return Boolean(await goalQuery(db, orgId).where('g.id', '=', id).where(visibleTo(profileId)).select('g.id').executeTakeFirst())
}

/** The display name of the profile a goal is assigned to, for the leaderboard. */
export const goalProfileName = (profile: GoalProfileView) => `${profile.first_name} ${profile.last_name}`.trim() || profile.email

/**
 * The leaderboard's goals (the original's rule): the active goals assigned to one profile whose
 * period holds `today` and has `periodType`, those a member may read (all for an admin), ranked by
 * progress_percent (highest first), ties by the profile's name then the goal's id.
 */
export async function leaderboardGoals(db: Db, orgId: string, filter: { today: string; periodType: string; viewer?: string }): Promise<GoalView[]> {
  const query = filtered(db, orgId, { current: filter.today, active: true, periodType: filter.periodType, viewer: filter.viewer }).where('g.owner_type', '=', 'profile')
  const rows = (await withProgress(query).orderBy('g.id').execute()) as GoalView[]
  return rows
    .map(viewOf)
    .filter((row) => row.profile)
    .sort((a, b) => b.progress_percent - a.progress_percent || goalProfileName(a.profile!).toLowerCase().localeCompare(goalProfileName(b.profile!).toLowerCase()) || (a.id < b.id ? -1 : 1))
}
