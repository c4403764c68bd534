import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.ts'
import type { Fence } from './apply.ts'
import { PROJECTOR_NAME } from './projector.ts'

/** Units this process holds: projector name → the epoch it was granted under. */
export type Held = ReadonlyMap<string, bigint>

/** A page's transaction found that this process no longer holds a unit it applies: nothing of it commits. */
export class LeaseLostError extends Error {
  constructor(readonly names: readonly string[]) {
    super(`Projection lease lost for ${names.join(', ')}: another process holds it now`)
    this.name = 'LeaseLostError'
  }
}

/** A process's name in the lease tables: readable in `/api/projections/`, unique across restarts and machines. */
export const processName = (): string => `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`

const seconds = (ms: number) => ms / 1000

type NameEpoch = { name: string; epoch: string }
const toHeld = (rows: readonly NameEpoch[]) => new Map(rows.map((r) => [r.name, BigInt(r.epoch)]))

/**
 * The lease tables' statements (migration 2026-11-27T05-00-00). Every statement that locks lease
 * rows takes them in name order, as the fence does, so a takeover and a page's fence over
 * overlapping rows queue rather than deadlock. A renewal changes no key column (the epoch is one),
 * so it never waits for a page in flight: a long page cannot make its own process's lease lapse.
 */
export function leaseStore(db: Kysely<Database>, owner: string, leaseMs: number) {
  return {
    /** Says this process is alive for another lease period; answers every live member, in name order (this one included). */
    async heartbeat(): Promise<string[]> {
      const { rows } = await sql<{ owner: string }>`
        WITH me AS (
          INSERT INTO projection_members (owner, seen_until) VALUES (${owner}, now() + make_interval(secs => ${seconds(leaseMs)}))
          ON CONFLICT (owner) DO UPDATE SET seen_until = excluded.seen_until
          RETURNING owner
        )
        SELECT owner FROM projection_members WHERE seen_until > now() AND owner <> ${owner}
        UNION SELECT owner FROM me
        ORDER BY owner`.execute(db)
      return rows.map((r) => r.owner)
    },

    /** Leaves the members at once (a stop), so the others count their shares without it. */
    async leave(): Promise<void> {
      await sql`DELETE FROM projection_members WHERE owner = ${owner} OR seen_until < now() - interval '1 hour'`.execute(db)
    },

    /**
     * Takes the units among `names` that nobody holds (never granted, released, or expired), each under
     * a new epoch. A unit whose row is locked is skipped: its holder is applying a page, so it is alive.
     */
    async acquire(names: readonly string[]): Promise<Held> {
      if (names.length === 0) return new Map()
      await sql`INSERT INTO projection_leases (name) SELECT unnest(${names}::text[]) ON CONFLICT (name) DO NOTHING`.execute(db)
      const { rows } = await sql<NameEpoch>`
        WITH free AS (
          SELECT name FROM projection_leases
          WHERE name = ANY(${names}::text[]) AND (owner IS NULL OR lease_until < now())
          ORDER BY name FOR UPDATE SKIP LOCKED
        )
        UPDATE projection_leases l SET owner = ${owner}, epoch = l.epoch + 1, lease_until = now() + make_interval(secs => ${seconds(leaseMs)})
        FROM free WHERE l.name = free.name
        RETURNING l.name, l.epoch::text AS epoch`.execute(db)
      return toHeld(rows)
    },

    /** Extends the leases still held under the same epoch; answers those (a unit missing from the answer was lost). */
    async renew(held: Held): Promise<Held> {
      if (held.size === 0) return new Map()
      const { rows } = await sql<NameEpoch>`
        WITH mine AS (
          SELECT name FROM projection_leases
          WHERE owner = ${owner} AND (name, epoch) IN (SELECT * FROM unnest(${[...held.keys()]}::text[], ${[...held.values()].map(String)}::bigint[]))
          ORDER BY name FOR NO KEY UPDATE
        )
        UPDATE projection_leases l SET lease_until = now() + make_interval(secs => ${seconds(leaseMs)})
        FROM mine WHERE l.name = mine.name
        RETURNING l.name, l.epoch::text AS epoch`.execute(db)
      return toHeld(rows)
    },

    /** Gives units up at once (a stop, or a share that shrank), after this process stopped applying them. */
    async release(names: readonly string[]): Promise<void> {
      if (names.length === 0) return
      await sql`
        WITH mine AS (SELECT name FROM projection_leases WHERE owner = ${owner} AND name = ANY(${names}::text[]) ORDER BY name FOR NO KEY UPDATE)
        UPDATE projection_leases l SET owner = NULL, lease_until = '-infinity' FROM mine WHERE l.name = mine.name`.execute(db)
    },
  }
}

export type LeaseStore = ReturnType<typeof leaseStore>

/**
 * The fence, first statement of every page's transaction: this process must still hold each unit it
 * applies, under the epoch it was granted. The rows stay key-share-locked until the commit, so a
 * takeover (which bumps the epoch, a key column) waits for this page, a renewal does not, and a page after a takeover finds the new epoch and
 * throws: a deposed process cannot commit, whether or not it has noticed yet. Its text travels with
 * BEGIN (apply.ts), so its values are inlined: only projector names, their pattern checked (the
 * owner and epochs are compared here, on the rows it answers).
 */
export function leaseFence(owner: string, held: Held): Fence {
  const names = [...held.keys()].sort()
  for (const name of names) if (!PROJECTOR_NAME.test(name)) throw new Error(`Expected a projector name to inline, got "${name}"`)
  return {
    statement: `SELECT name, owner, epoch::text AS epoch FROM projection_leases WHERE name IN (${names.map((n) => `'${n}'`).join(', ')}) ORDER BY name FOR KEY SHARE`,
    verify(rows) {
      const current = new Map((rows as { name: string; owner: string | null; epoch: string }[]).map((r) => [r.name, r]))
      const lost = names.filter((name) => {
        const row = current.get(name)
        return !row || row.owner !== owner || BigInt(row.epoch) !== held.get(name)
      })
      if (lost.length) throw new LeaseLostError(lost)
    },
  }
}

/** `leaseUntil` is null while nobody holds it (released leases read '-infinity'). */
export type LeaseRow = { name: string; owner: string | null; epoch: bigint; leaseUntil: Date | null }

/** Who holds what, for `/api/projections/`. */
export async function readLeases(db: Kysely<Database>): Promise<LeaseRow[]> {
  const { rows } = await sql<{ name: string; owner: string | null; epoch: string; lease_until: Date | null }>`
    SELECT name, owner, epoch::text AS epoch, CASE WHEN owner IS NULL THEN NULL ELSE lease_until END AS lease_until FROM projection_leases ORDER BY name`.execute(db)
  return rows.map((r) => ({ name: r.name, owner: r.owner, epoch: BigInt(r.epoch), leaseUntil: r.lease_until }))
}

/** A unit and how much work it is likely to be: the number of event types its read model applies. */
export type Unit = { name: string; weight: number }

/**
 * This process's share, for the member at `rank` of M live members (sorted by name, the same list in
 * every process). The units are dealt out heaviest first, in a snake (ranks 0…M-1, then M-1…0), so
 * the heaviest read models land on different processes and each process's total evens out. The
 * weight is a proxy: the read models that apply the most event types are the ones most writes feed
 * (the activity feed, notifications and search each apply a deal create's events, as do the deals').
 */
export function shareOf(units: readonly Unit[], members: readonly string[], owner: string): string[] {
  const rank = members.indexOf(owner)
  if (rank < 0) return []
  const m = members.length
  const dealt = units.map((unit, order) => ({ ...unit, order })).sort((a, b) => b.weight - a.weight || a.order - b.order)
  return dealt.filter((_, i) => (Math.floor(i / m) % 2 === 0 ? i % m : m - 1 - (i % m)) === rank).map((unit) => unit.name)
}
