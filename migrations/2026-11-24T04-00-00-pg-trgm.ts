import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * pg_trgm for global search (issue 19): trigram indexes find names by a fragment or with a typo.
 * Created here, in the live schema, not by the search projector: a rebuild runs createTables in a
 * scratch schema that is dropped afterwards, and would take the extension with it. A server
 * without the extension (or a role that may not create it) keeps going: search then finds by
 * words and name prefixes only (projections/search/queries.ts checks for it).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`DO $$
    BEGIN
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'pg_trgm is not available (%): search finds by words and name prefixes only', SQLERRM;
    END
  $$`.execute(db)
}

// Left in place: dropping it would break any index another migration or a DBA built on it.
export async function down(): Promise<void> {}
