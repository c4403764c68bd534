import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * A guarded or multi-stream append in ONE round trip (issue 20): what the event store sent as
 * BEGIN, lock, one revision read per guard, one append per stream and COMMIT (6 statements for a
 * deal's create with its name claim) is one call of this function, in the statement's own
 * transaction. The steps and their order are those documented in src/eventstore/postgres.ts:
 *   1. every stream's lock exclusive and every guard's shared, in key order (no deadlock between
 *      appends whose streams and guards cross);
 *   2. under the locks, each guard's revision and each stream's expectation checked, each by a
 *      statement of its own and hence a fresh snapshot (a volatile PL/pgSQL function in READ
 *      COMMITTED takes one per statement), which sees every append that held a lock before us;
 *   3. the events inserted, stream by stream, their rows answered.
 * A mismatch raises SQLSTATE CRM01 with the stream, and its actual revision (-1: no stream) in the
 * detail: the whole statement, and with it every write of the call, is undone.
 * Under REPEATABLE READ or SERIALIZABLE the snapshot would predate the locks, so the function
 * refuses to run there rather than check a guard against a stale view.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION crm_append_streams(
      p_streams text[], p_modes text[], p_expected bigint[],
      p_guards text[], p_guard_revisions bigint[],
      p_stream_of int[], p_ids uuid[], p_types text[], p_versions int[], p_data jsonb[], p_metadata jsonb[])
    RETURNS TABLE (commit text, prepare text, revision text)
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      i int;
      actual bigint;
      mismatch boolean;
    BEGIN
      IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'crm_append_streams needs READ COMMITTED, not %', current_setting('transaction_isolation');
      END IF;
      PERFORM CASE WHEN k.exclusive THEN pg_advisory_xact_lock(k.key) ELSE pg_advisory_xact_lock_shared(k.key) END
      FROM (SELECT hashtextextended(v.name, 0) AS key, bool_or(v.exclusive) AS exclusive
            FROM unnest(p_streams || p_guards, array_fill(true, ARRAY[cardinality(p_streams)]) || array_fill(false, ARRAY[cardinality(p_guards)])) AS v(name, exclusive)
            GROUP BY 1) k
      ORDER BY k.key;
      FOR i IN 1 .. coalesce(cardinality(p_guards), 0) LOOP
        SELECT max(e.stream_revision) INTO actual FROM events e WHERE e.stream_name = p_guards[i];
        IF actual IS DISTINCT FROM p_guard_revisions[i] THEN
          RAISE EXCEPTION USING ERRCODE = 'CRM01', MESSAGE = 'wrong expected revision', DETAIL = p_guards[i], HINT = coalesce(actual, -1)::text;
        END IF;
      END LOOP;
      FOR i IN 1 .. cardinality(p_streams) LOOP
        SELECT max(e.stream_revision) INTO actual FROM events e WHERE e.stream_name = p_streams[i];
        -- An assignment, not the IF's condition: PL/pgSQL ends that at the first THEN.
        mismatch := CASE p_modes[i]
             WHEN 'no_stream' THEN actual IS NOT NULL
             WHEN 'exact' THEN actual IS DISTINCT FROM p_expected[i]
             WHEN 'stream_exists' THEN actual IS NULL
             ELSE false END;
        IF mismatch THEN
          RAISE EXCEPTION USING ERRCODE = 'CRM01', MESSAGE = 'wrong expected revision', DETAIL = p_streams[i], HINT = coalesce(actual, -1)::text;
        END IF;
        RETURN QUERY
          INSERT INTO events (stream_name, stream_revision, event_id, event_type, schema_version, data, metadata)
          SELECT p_streams[i], coalesce(actual, -1) + row_number() OVER (ORDER BY e.ord), e.id, e.type, e.version, e.data, e.metadata
          FROM unnest(p_stream_of, p_ids, p_types, p_versions, p_data, p_metadata) WITH ORDINALITY AS e(stream, id, type, version, data, metadata, ord)
          WHERE e.stream = i
          ORDER BY e.ord
          RETURNING events.transaction_id::text, events.global_position::text, events.stream_revision::text;
      END LOOP;
    END
    $fn$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS crm_append_streams(text[], text[], bigint[], text[], bigint[], int[], uuid[], text[], int[], jsonb[], jsonb[])`.execute(db)
}
