import type { StageKind } from '../../commands/pipeline/stage-rules.ts'

/**
 * Aging (§3.2), derived at read time from stage_changed_at and the stage's thresholds. Open stages
 * only: a won or lost deal has no aging status. Days are whole days; a deal with no
 * stage_changed_at is never stalled. The list filters compute the same thresholds in SQL.
 */
export type AgingStatus = 'green' | 'yellow' | 'red'
export type Thresholds = { expected_days: number | null; warning_days: number | null }

const DAY_MS = 86_400_000

export const daysSince = (since: Date | null, now: Date): number | null => (since ? Math.max(0, Math.floor((now.getTime() - since.getTime()) / DAY_MS)) : null)

/** The instant (epoch ms) from which `daysSince(since, ·)` no longer answers what it answers at `now`: the next whole day (Infinity without a `since`). */
export const daysChangeAt = (since: Date | null, now: Date): number => (since ? since.getTime() + ((daysSince(since, now) ?? 0) + 1) * DAY_MS : Infinity)

/** Red from ceil(expected_days × 1.5) days, yellow from warning_days (or expected_days), else green; null thresholds never rot. */
export function agingStatus(kind: StageKind | null, days: number | null, { expected_days, warning_days }: Thresholds): AgingStatus | null {
  if (kind !== 'open') return null
  if (days === null) return 'green'
  if (expected_days !== null && days >= Math.ceil(expected_days * 1.5)) return 'red'
  const yellowFrom = warning_days ?? expected_days
  return yellowFrom !== null && days >= yellowFrom ? 'yellow' : 'green'
}
