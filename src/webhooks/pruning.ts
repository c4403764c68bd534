import { sql } from 'kysely'
import type { Db } from '../db/database.ts'

/**
 * The delivery log is kept bounded: per webhook only the newest `keep` attempts, and none older
 * than `keepDays` (0 turns either limit off). The delivery worker deletes in small batches, so a
 * long backlog never holds locks for long; queued redeliveries (pending) are never deleted.
 */
export type PrunePolicy = {
  /** Completed deliveries kept per webhook, newest first; 0: no count limit. */
  keep: number
  /** Deliveries older than this many days go; 0: no age limit. */
  keepDays: number
  /** Rows deleted per statement. */
  batchSize: number
  /** Pause between rounds once nothing is left to delete. */
  everyMs: number
}

export const DEFAULT_PRUNE: PrunePolicy = { keep: 1000, keepDays: 0, batchSize: 500, everyMs: 60_000 }

/** One batch (age limit first, then the count limit); answers how many rows went, so the caller knows whether more wait. */
export async function pruneDeliveries(db: Db, policy: PrunePolicy, now: Date): Promise<number> {
  const limit = policy.batchSize
  if (policy.keepDays > 0) {
    const cutoff = new Date(now.getTime() - policy.keepDays * 86_400_000)
    // seq grows with created_at: the oldest rows come first along the seq index.
    const old = await sql`
      DELETE FROM webhook_deliveries WHERE seq IN (
        SELECT seq FROM webhook_deliveries WHERE created_at < ${cutoff} AND status <> 'pending' ORDER BY seq LIMIT ${limit})`.execute(db)
    const deleted = Number(old.numAffectedRows ?? 0n)
    if (deleted > 0) return deleted
  }
  if (policy.keep <= 0) return 0
  // For each webhook, the seq of its newest completed row beyond `keep` (an index scan on (webhook_id, seq DESC)); every completed row at or below it goes.
  const excess = await sql`
    DELETE FROM webhook_deliveries WHERE seq IN (
      SELECT d.seq FROM (SELECT DISTINCT webhook_id FROM webhook_deliveries) w
      CROSS JOIN LATERAL (SELECT seq FROM webhook_deliveries x WHERE x.webhook_id = w.webhook_id AND x.status <> 'pending' ORDER BY seq DESC OFFSET ${policy.keep} LIMIT 1) edge
      JOIN webhook_deliveries d ON d.webhook_id = w.webhook_id AND d.seq <= edge.seq AND d.status <> 'pending'
      LIMIT ${limit})`.execute(db)
  return Number(excess.numAffectedRows ?? 0n)
}
