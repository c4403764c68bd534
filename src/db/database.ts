import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { ColumnType, Generated } from 'kysely'

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

export interface Database {
  events: EventsTable
  projection_checkpoints: ProjectionCheckpointsTable
}

export type Db = Kysely<Database>

export function createPool(url: string, max: number): pg.Pool {
  return new pg.Pool({
    connectionString: url,
    max,
    // Our own transactions are short; a stuck one would hold back every event subscriber (see eventstore/postgres.ts).
    idle_in_transaction_session_timeout: 30_000,
    application_name: 'crm-deals',
  })
}

export function createDb(pool: pg.Pool): Db {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
}
