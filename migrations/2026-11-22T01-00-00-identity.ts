import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * Organizations, users, their memberships (profiles) and credentials. These are state tables, not
 * event-sourced: credentials need uniqueness, hashed secrets and one-index lookups on every request,
 * and secrets must never enter the event log. Credential lifecycle is recorded as audit events.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE organizations (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      default_currency text NOT NULL DEFAULT 'USD',
      timezone text NOT NULL DEFAULT 'UTC',
      is_active boolean NOT NULL DEFAULT true,
      api_key_hash bytea UNIQUE,
      api_key_prefix text,
      api_key_created_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db)
  await sql`
    CREATE TABLE users (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      first_name text NOT NULL DEFAULT '',
      last_name text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db)
  await sql`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`.execute(db)
  await sql`
    CREATE TABLE profiles (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      org_id uuid NOT NULL REFERENCES organizations (id),
      role text NOT NULL CHECK (role IN ('ADMIN', 'USER')),
      is_active boolean NOT NULL DEFAULT true,
      phone text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (user_id, org_id)
    )`.execute(db)
  await sql`CREATE INDEX profiles_org ON profiles (org_id)`.execute(db)
  await sql`
    CREATE TABLE personal_access_tokens (
      id uuid PRIMARY KEY,
      profile_id uuid NOT NULL REFERENCES profiles (id),
      org_id uuid NOT NULL REFERENCES organizations (id),
      name text NOT NULL,
      token_prefix text NOT NULL,
      token_hash bytea NOT NULL UNIQUE,
      scopes text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      last_used_at timestamptz,
      revoked_at timestamptz
    )`.execute(db)
  await sql`CREATE INDEX personal_access_tokens_profile ON personal_access_tokens (profile_id)`.execute(db)
  await sql`CREATE INDEX personal_access_tokens_org ON personal_access_tokens (org_id)`.execute(db)
  await sql`
    CREATE TABLE refresh_tokens (
      id uuid PRIMARY KEY,
      profile_id uuid NOT NULL REFERENCES profiles (id),
      family_id uuid NOT NULL,
      token_hash bytea NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`.execute(db)
  await sql`CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['refresh_tokens', 'personal_access_tokens', 'profiles', 'users', 'organizations']) {
    await sql`DROP TABLE ${sql.table(table)}`.execute(db)
  }
}
