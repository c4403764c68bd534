import { sql } from 'kysely'
import type { Kysely } from 'kysely'

/**
 * Group commit (issue 20): the appends of concurrent commands of one process, batched by the event
 * store (src/eventstore/postgres.ts), in ONE statement and so one transaction, one round trip and
 * one WAL flush. p_requests is a JSON array; each element holds one append's crm_append_streams
 * arguments by name (streams, modes, expected, guards, guard_revisions, stream_of, ids, types,
 * versions, data, metadata).
 *   1. Every lock of the whole batch first, in key order: exclusive for a stream any request
 *      appends to, shared for one that is only a guard. Batches of different processes therefore
 *      lock like single appends did and cannot deadlock with each other (locks taken request by
 *      request would cross: request 1 holding A while request 2 waits for B, and another batch the
 *      other way round). crm_append_streams takes them again, which the holder gets at once.
 *   2. Each request in a block with an EXCEPTION clause, i.e. a subtransaction: a request whose
 *      guard or expectation fails (CRM01), or which fails otherwise, has its own writes undone and
 *      is answered its failure; its neighbours' writes stay. Requests run in array order and each
 *      check is a fresh statement, so a request sees the earlier requests' events (two appends to
 *      one stream behave as if sequential).
 * One row per request: on success its last event's commit, prepare and revision (the highest
 * position it wrote), otherwise the SQLSTATE, the stream and actual revision of a CRM01 (-1: no
 * stream) and the message. QUERY_CANCELED is not caught by OTHERS: a cancelled batch fails whole.
 * Every successful request has its own subtransaction id; PostgreSQL caches 64 of them per backend
 * before other backends' snapshots must look them up in pg_subtrans, so the caller keeps batches
 * at most that long.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION crm_append_batch(p_requests jsonb)
    RETURNS TABLE (request int, commit text, prepare text, revision text, failure text, stream text, actual bigint, message text)
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      i int;
      r jsonb;
      detail text;
      hint text;
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
}
