import { z } from 'zod'
import { ConfigError } from '../config.ts'
import type { Runtime } from '../runtime.ts'
import { ReadModelsBehindError, findOrphanClaims, releaseOrphans } from './orphan-claims.ts'
import type { ReleaseOutcome } from './orphan-claims.ts'
import type { Claim } from './orphans.ts'

/** `names orphans [--org <id>] [--older-than <seconds>] [--release] [--json]` (src/cli.ts). */
export type NamesOrphansOptions = { org?: string; json?: boolean; release?: boolean; 'older-than'?: string }

/** Long enough that no create or rename is still between its claim and its record. */
export const DEFAULT_GRACE_SECONDS = 300

const Options = z.object({
  org: z.uuid('Expected --org to be an organization id (a uuid)').optional(),
  'older-than': z.coerce.number('Expected --older-than to be a number of seconds').int('Expected --older-than to be a whole number of seconds').min(0, 'Expected --older-than to be 0 or more seconds').default(DEFAULT_GRACE_SECONDS),
})

type Row = { scope: string; org_id: string; name: string; owner_id: string; claimed_at: string; stream: string; released?: boolean; reason?: string }

const rowOf = (claim: Claim, outcome?: ReleaseOutcome): Row => ({
  scope: claim.scope,
  org_id: claim.orgId,
  name: claim.name,
  owner_id: claim.ownerId!,
  claimed_at: claim.claimedAt.toISOString(),
  stream: claim.streamName,
  ...(outcome && { released: outcome.released, ...(outcome.reason && { reason: outcome.reason }) }),
})

/** Lists (and with --release, frees) the claims whose owner has no live record of that name. A string is printed as is, anything else as JSON. */
export async function namesOrphans(runtime: Pick<Runtime, 'db' | 'store' | 'projections'>, options: NamesOrphansOptions, now = new Date()): Promise<string | object> {
  const parsed = Options.safeParse(options)
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message).join('; '))
  const { org, 'older-than': olderThan } = parsed.data
  const found = await findOrphanClaims(runtime, { orgId: org, now, graceMs: olderThan * 1000 }).catch((error: unknown) => {
    throw error instanceof ReadModelsBehindError ? new ConfigError(error.message) : error
  })
  const outcomes = options.release ? await releaseOrphans(runtime.store, found.orphans) : undefined
  const rows = found.orphans.map((claim, i) => rowOf(claim, outcomes?.[i]))
  const report = { orphans: rows, held: found.held, too_recent: found.recent, unknown_scopes: found.unknownScopes, older_than_seconds: olderThan, ...(outcomes && { released: outcomes.filter((o) => o.released).length }) }
  return options.json ? report : table(report)
}

function table(report: { orphans: Row[]; held: number; too_recent: number; unknown_scopes: string[]; older_than_seconds: number; released?: number }): string {
  const columns = ['scope', 'org_id', 'name', 'owner_id', 'claimed_at', ...(report.released === undefined ? [] : ['released', 'reason'])] as const
  const cells = [columns.map(String), ...report.orphans.map((row) => columns.map((c) => String(row[c as keyof Row] ?? '')))]
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)))
  const lines = report.orphans.length ? cells.map((line) => line.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()) : ['No orphan name claims.']
  const summary = [`${report.orphans.length} orphan(s)`, `${report.held} held by live records`, `${report.too_recent} younger than ${report.older_than_seconds} s (not judged)`]
  if (report.released !== undefined) summary.push(`${report.released} released`)
  if (report.unknown_scopes.length) summary.push(`scopes with no known read model, left alone: ${report.unknown_scopes.join(', ')}`)
  return `${lines.join('\n')}\n\n${summary.join('; ')}`
}
