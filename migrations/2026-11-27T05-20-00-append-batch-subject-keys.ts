import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import { up as unkeyedBatch } from './2026-11-24T05-40-00-append-batch-function.ts'

/**
 * A new person's data key stored by the append that first seals with it (issue 31,
 * docs/personal-data.md): crm_append_batch as before (migrations/…-append-batch-function.ts), except
 * that a request may carry `keys`, an array of {subject, key} (the wrapped key in hex), which it
 * inserts into subject_keys in the request's own subtransaction, before its events. So creating a
 * person costs no transaction nor round trip of its own, and the key and the events sealed with it
 * commit together or not at all. A subject that already has a row (a key, or a destroyed one) fails
 * the request with SQLSTATE CRM02: its events were sealed with a key that is not the person's, so
 * they must not be written; the caller reads the stored keys and seals again. Two appends that make the same subject's key wait for each other on the primary key, and
 * the second fails so.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION crm_append_batch(p_requests jsonb)
    RETURNS TABLE (request int, commit text, prepare text, revision text, failure text, stream text, actual bigint, message text)
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      i int;
      r jsonb;
      detail text;
      hint text;
      made int;
    BEGIN
      PERFORM CASE WHEN k.exclusive THEN pg_advisory_xact_lock(k.key) ELSE pg_advisory_xact_lock_shared(k.key) END
      FROM (SELECT hashtextextended(v.name, 0) AS key, bool_or(v.exclusive) AS exclusive
            FROM jsonb_array_elements(p_requests) q,
            LATERAL (SELECT s, true FROM jsonb_array_elements_text(q->'streams') s
                     UNION ALL SELECT g, false FROM jsonb_array_elements_text(q->'guards') g) AS v(name, exclusive)
            GROUP BY 1) k
      ORDER BY k.key;
      -- A FOR loop declares its own variable, which would hide the output column: hence i.
      FOR i IN 1 .. jsonb_array_length(p_requests) LOOP
        r := p_requests->(i - 1);
        request := i; commit := NULL; prepare := NULL; revision := NULL; failure := NULL; stream := NULL; actual := NULL; message := NULL;
        BEGIN
          IF jsonb_array_length(coalesce(r->'keys', '[]')) > 0 THEN
            INSERT INTO subject_keys (subject, data_key)
            SELECT k->>'subject', decode(k->>'key', 'hex') FROM jsonb_array_elements(r->'keys') k
            ON CONFLICT (subject) DO NOTHING;
            GET DIAGNOSTICS made = ROW_COUNT;
            IF made < jsonb_array_length(r->'keys') THEN
              RAISE EXCEPTION 'a data key exists already' USING ERRCODE = 'CRM02';
            END IF;
          END IF;
          SELECT a.commit, a.prepare, a.revision INTO commit, prepare, revision
          FROM crm_append_streams(
            ARRAY(SELECT x FROM jsonb_array_elements_text(r->'streams') WITH ORDINALITY AS t(x, n) ORDER BY n),
            ARRAY(SELECT x FROM jsonb_array_elements_text(r->'modes') WITH ORDINALITY AS t(x, n) ORDER BY n),
            ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(r->'expected') WITH ORDINALITY AS t(x, n) ORDER BY n),
            ARRAY(SELECT x FROM jsonb_array_elements_text(r->'guards') WITH ORDINALITY AS t(x, n) ORDER BY n),
            ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(r->'guard_revisions') WITH ORDINALITY AS t(x, n) ORDER BY n),
            ARRAY(SELECT x::int FROM jsonb_array_elements_text(r->'stream_of') WITH ORDINALITY AS t(x, n) ORDER BY n),
            ARRAY(SELECT x::uuid FROM jsonb_array_elements_text(r->'ids') WITH ORDINALITY AS t(x, n) ORDER BY n),
            ARRAY(SELECT x FROM jsonb_array_elements_text(r->'types') WITH ORDINALITY AS t(x, n) ORDER BY n),
            ARRAY(SELECT x::int FROM jsonb_array_elements_text(r->'versions') WITH ORDINALITY AS t(x, n) ORDER BY n),
            ARRAY(SELECT x FROM jsonb_array_elements(r->'data') WITH ORDINALITY AS t(x, n) ORDER BY n),
            ARRAY(SELECT x FROM jsonb_array_elements(r->'metadata') WITH ORDINALITY AS t(x, n) ORDER BY n)) a
          ORDER BY a.prepare::bigint DESC LIMIT 1;
        EXCEPTION
          WHEN SQLSTATE 'CRM01' THEN
            GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
            failure := 'CRM01'; stream := detail; actual := hint::bigint;
          WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS failure = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
        END;
        RETURN NEXT;
      END LOOP;
    END
    $fn$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS crm_append_batch(jsonb)`.execute(db)
  await unkeyedBatch(db)
}
