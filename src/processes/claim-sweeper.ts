import type { Logger } from 'pino'
import type { Deps } from '../deps.ts'
import { findOrphanClaims, releaseOrphans } from '../names/orphan-claims.ts'
import type { ReleaseOutcome } from '../names/orphan-claims.ts'
import type { ProjectionRunner } from '../projections/kernel/runner.ts'
import { everyInterval } from './every-interval.ts'

export type ClaimSweeperOptions = Pick<Deps, 'db' | 'store' | 'clock'> & {
  /** Leads the sweeps too: only the scheduled processes' leader sweeps, so one process does at a time. */
  projections: Pick<ProjectionRunner, 'isLeader' | 'waitFor'>
  logger: Logger
  /** A claim younger than this is never judged: its create may still be on its way. */
  graceMs: number
  intervalMs: number
}

export type SweepOutcome = { swept: false; reason: 'not the leader' } | { swept: true; released: ReleaseOutcome[] }

export type ClaimSweeper = { sweep(): Promise<SweepOutcome>; start(): void; stop(): Promise<void> }

/**
 * Frees name claims that no record holds (issue 21), as `names orphans --release` does by hand:
 * claims older than the grace period whose owner has no live record of that name. On PostgreSQL a
 * claim is appended with its record, so only claims from before that can be such orphans; on
 * KurrentDB, a process killed between the claim's append and the record's leaves one. Idempotent:
 * each release is appended at the revision the claim was read at, so a second sweep, or a second
 * process sweeping meanwhile, releases nothing twice. The clock is an input, so tests move it.
 */
export function createClaimSweeper(options: ClaimSweeperOptions): ClaimSweeper {
  const log = options.logger.child({ component: 'claim-sweeper' })

  async function sweep(): Promise<SweepOutcome> {
    if (!options.projections.isLeader) return { swept: false, reason: 'not the leader' }
    const found = await findOrphanClaims(options, { now: options.clock(), graceMs: options.graceMs })
    const released = await releaseOrphans(options.store, found.orphans, 'orphan name claim released by the claim sweeper')
    const count = released.filter((r) => r.released).length
    if (count) log.info({ released: count, names: released.filter((r) => r.released).map((r) => `${r.claim.scope}:${r.claim.name}`) }, 'released orphan name claims')
    return { swept: true, released }
  }

  return { sweep, ...everyInterval(sweep, options.intervalMs, log, 'claim sweep failed; trying again at the next interval') }
}
