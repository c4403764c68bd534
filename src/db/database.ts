import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { ColumnType, Generated, PostgresPool } from 'kysely'
import type { WebhookStoreTables } from '../webhooks/tables.ts'
import type { Role } from '../identity/identity.ts'

// int8 and numeric come back as strings; event positions are converted to bigint where read.
export type Int8 = ColumnType<string, string | bigint | number, string | bigint | number>

export interface EventsTable {
  global_position: Generated<Int8>
  transaction_id: Generated<string>
  stream_name: string
  stream_revision: Int8
  event_id: string
  event_type: string
  schema_version: number
  data: unknown
  metadata: unknown
  created_at: Generated<Date>
}

export interface ProjectionCheckpointsTable {
  name: string
  version: number
  position_commit: Int8
  position_prepare: Int8
  updated_at: Generated<Date>
}

// Defined with the identity it belongs to, which db/ must not import back (the read models' row types reach identity through commands).
export type { Role } from '../identity/identity.ts'

export interface OrganizationsTable {
  id: string
  name: string
  default_currency: Generated<string>
  timezone: Generated<string>
  is_active: Generated<boolean>
  api_key_hash: Buffer | null
  api_key_prefix: string | null
  api_key_created_at: Date | null
  /** The settings page's company profile and locale (2026-11-24T03-10-00). */
  company_name: Generated<string>
  address_line: Generated<string>
  city: Generated<string>
  state: Generated<string>
  postcode: Generated<string>
  country: Generated<string>
  phone: Generated<string>
  email: Generated<string>
  website: Generated<string>
  tax_id: Generated<string>
  default_country: string | null
  csat_enabled: Generated<boolean>
  auto_close_children_on_parent_close: Generated<boolean>
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

export interface UsersTable {
  id: string
  email: string
  first_name: Generated<string>
  last_name: Generated<string>
  /** Platform-level; granted by the operator's CLI only. */
  is_superuser: Generated<boolean>
  created_at: Generated<Date>
}

export interface ProfilesTable {
  id: string
  user_id: string
  org_id: string
  role: Role
  is_active: Generated<boolean>
  phone: Generated<string>
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

/** A membership's last interactive sign-in into its organization (2026-11-26T15-30-00); no row until the first. */
export interface ProfileSignInsTable {
  profile_id: string
  last_login: Date
}

export interface PersonalAccessTokensTable {
  id: string
  profile_id: string
  org_id: string
  name: string
  token_prefix: string
  token_hash: Buffer
  scopes: string[]
  created_at: Generated<Date>
  expires_at: Date | null
  last_used_at: Date | null
  revoked_at: Date | null
}

export interface RefreshTokensTable {
  id: string
  profile_id: string
  family_id: string
  token_hash: Buffer
  created_at: Generated<Date>
  expires_at: Date
  revoked_at: Date | null
}

export interface MagicLinksTable {
  id: string
  user_id: string
  token_hash: Buffer
  code_hash: Buffer
  created_at: Generated<Date>
  expires_at: Date
  used_at: Date | null
  attempts: Generated<number>
}

/** The customer portal's sign-in links (docs/portal.md): as magic links, bound to an organization and a contact. */
export interface PortalLinksTable {
  id: string
  org_id: string
  contact_id: string
  token_hash: Buffer
  code_hash: Buffer
  created_at: Generated<Date>
  expires_at: Date
  used_at: Date | null
  attempts: Generated<number>
}

export interface CoreTables {
  events: EventsTable
  projection_checkpoints: ProjectionCheckpointsTable
  organizations: OrganizationsTable
  users: UsersTable
  profiles: ProfilesTable
  profile_sign_ins: ProfileSignInsTable
  personal_access_tokens: PersonalAccessTokensTable
  refresh_tokens: RefreshTokensTable
  magic_links: MagicLinksTable
  portal_links: PortalLinksTable
}

/**
 * Every table: the migrations' (above, and the webhooks' store) and each read model's. A read model
 * adds its own from its module's `projections/<module>/tables.ts` by declaration merging
 * (`declare module '../../db/database.ts' { interface Database extends LeadTables {} }`), so a new
 * module edits no shared file for its tables. A rebuild fills the same names in a fresh schema, so
 * one type serves both.
 */
export interface Database extends CoreTables, WebhookStoreTables {}

export type Db = Kysely<Database>

export function createPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // Our own transactions are short; a stuck one would hold back every event subscriber (see eventstore/postgres.ts).
    idle_in_transaction_session_timeout: 30_000,
    application_name: 'crm-deals',
  })
  // pg-pool listens for errors only on idle clients: a server FATAL (a restart) reaching a checked-out
  // client between two queries would be an unhandled 'error' event and end the process. The client
  // is unusable either way; its next query fails and the pool discards it on release.
  pool.on('connect', (client) => client.on('error', () => {}))
  return pool
}

/**
 * A pool for a tool's own short session (bench, scripts): an idle client's error (a server restart,
 * its database dropped WITH (FORCE) while the pool is still open) is re-emitted on the pool, and
 * would end the process without a listener; the server's pools log it instead (runtime.ts).
 */
export function createQuietPool(url: string, max: number): pg.Pool {
  return createPool(url, max).on('error', () => {})
}

const pools = new WeakMap<Db, PostgresPool>()

/** `pool`: a pg pool, or any kysely PostgresPool (db/read-replica.ts routes between two). */
export function createDb(pool: PostgresPool): Db {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  pools.set(db, pool)
  return db
}

/** The pool `db` was made on: for what kysely cannot send, a rebuild's COPY (its clients are pg clients, on the primary outside a replica read). */
export function poolOf(db: Db): PostgresPool {
  const pool = pools.get(db)
  if (!pool) throw new Error('Expected a db made by createDb')
  return pool
}
