import { ValidationError } from '../../errors.ts'

/** Stage values and the pure rules shared by every stage write (§2.2, §4.5, §8). */
export const STAGE_KINDS = ['open', 'won', 'lost'] as const
export type StageKind = (typeof STAGE_KINDS)[number]

/**
 * A stage as events record it. `probability` is the default a deal in the stage gets when its own
 * probability is 0 or unset (§2.1): 100 won, 0 lost, the seeded per-code default for the seeded
 * open stages, null (no default) for any other open stage.
 */
export type Stage = {
  id: string
  code: string
  label: string
  order: number
  kind: StageKind
  expected_days: number | null
  warning_days: number | null
  probability: number | null
}

export type Thresholds = { expected_days: number | null; warning_days: number | null }

export const MIN_DAYS = 1
export const MAX_DAYS = 3650

/** The stages a new pipeline is seeded with, in order. */
export type StageSeed = readonly Omit<Stage, 'id' | 'order'>[]

/** The six stages of every new deal pipeline (spec §2.2; values from where-the-spec-is-silent.md, Deals). */
export const DEAL_SEED: StageSeed = [
  { code: 'PROSPECTING', label: 'Prospecting', kind: 'open', expected_days: 14, warning_days: null, probability: 10 },
  { code: 'QUALIFICATION', label: 'Qualification', kind: 'open', expected_days: 14, warning_days: null, probability: 25 },
  { code: 'PROPOSAL', label: 'Proposal', kind: 'open', expected_days: 10, warning_days: null, probability: 50 },
  { code: 'NEGOTIATION', label: 'Negotiation', kind: 'open', expected_days: 10, warning_days: null, probability: 75 },
  { code: 'CLOSED_WON', label: 'Closed Won', kind: 'won', expected_days: null, warning_days: null, probability: 100 },
  { code: 'CLOSED_LOST', label: 'Closed Lost', kind: 'lost', expected_days: null, warning_days: null, probability: 0 },
]

/**
 * The five stages of every new lead pipeline (our choice; the spec shows none): three open steps of
 * working a lead, then won (converted) and lost (disqualified). They never rot until an admin sets
 * thresholds; open stages carry no default probability.
 */
export const LEAD_SEED: StageSeed = [
  { code: 'NEW', label: 'New', kind: 'open', expected_days: null, warning_days: null, probability: null },
  { code: 'CONTACTED', label: 'Contacted', kind: 'open', expected_days: null, warning_days: null, probability: null },
  { code: 'QUALIFIED', label: 'Qualified', kind: 'open', expected_days: null, warning_days: null, probability: null },
  { code: 'CONVERTED', label: 'Converted', kind: 'won', expected_days: null, warning_days: null, probability: 100 },
  { code: 'DISQUALIFIED', label: 'Disqualified', kind: 'lost', expected_days: null, warning_days: null, probability: 0 },
]

/**
 * The five stages of every new task pipeline: the original's seed (To Do, In Progress, Review, Done),
 * and a lost stage, since every pipeline keeps an open, a won and a lost stage (§4.5). Done and
 * Cancelled both complete the task (commands/task/move.ts).
 */
export const TASK_SEED: StageSeed = [
  { code: 'TO_DO', label: 'To Do', kind: 'open', expected_days: null, warning_days: null, probability: null },
  { code: 'IN_PROGRESS', label: 'In Progress', kind: 'open', expected_days: null, warning_days: null, probability: null },
  { code: 'REVIEW', label: 'Review', kind: 'open', expected_days: null, warning_days: null, probability: null },
  { code: 'DONE', label: 'Done', kind: 'won', expected_days: null, warning_days: null, probability: 100 },
  { code: 'CANCELLED', label: 'Cancelled', kind: 'lost', expected_days: null, warning_days: null, probability: 0 },
]

/**
 * The four stages of every new case pipeline: two open steps of working a ticket, then resolved (won)
 * and rejected (lost), every pipeline keeping an open, a won and a lost stage (§4.5). A case entering
 * a stage takes the status it stands for (commands/case/move.ts).
 */
export const CASE_SEED: StageSeed = [
  { code: 'NEW', label: 'New', kind: 'open', expected_days: null, warning_days: null, probability: null },
  { code: 'IN_PROGRESS', label: 'In Progress', kind: 'open', expected_days: null, warning_days: null, probability: null },
  { code: 'RESOLVED', label: 'Resolved', kind: 'won', expected_days: null, warning_days: null, probability: 100 },
  { code: 'REJECTED', label: 'Rejected', kind: 'lost', expected_days: null, warning_days: null, probability: 0 },
]

export function seededStages(ids: readonly string[], seed: StageSeed = DEAL_SEED): Stage[] {
  if (ids.length !== seed.length) throw new Error(`Expected ${seed.length} stage ids for the seeded stages, got ${ids.length}`)
  return seed.map((stage, i) => ({ ...stage, id: ids[i]!, order: i + 1 }))
}

/** The default probability of a stage of this kind and code (see `Stage`): the seeded open stages keep theirs. */
export function defaultProbability(kind: StageKind, code: string, seed: StageSeed = DEAL_SEED): number | null {
  if (kind === 'won') return 100
  if (kind === 'lost') return 0
  return seed.find((s) => s.code === code && s.kind === 'open')?.probability ?? null
}

/** Uppercase, accents dropped, every run of other characters to one `_`, no `_` at either end; `_2`, `_3`... when taken. */
export function stageCode(label: string, taken: readonly string[]): string {
  const base =
    label
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toUpperCase()
      .replace(/[^A-Z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'STAGE'
  const used = new Set(taken)
  if (!used.has(base)) return base
  for (let n = 2; ; n++) if (!used.has(`${base}_${n}`)) return `${base}_${n}`
}

/** 400 naming the field (`prefix` names the entry, e.g. `PROSPECTING.` in aging-config) unless the thresholds fit the kind. */
export function checkThresholds(kind: StageKind, thresholds: Thresholds, prefix = ''): void {
  const errors: Record<string, string[]> = {}
  for (const field of ['expected_days', 'warning_days'] as const) {
    const value = thresholds[field]
    if (value === null) continue
    if (kind !== 'open') errors[`${prefix}${field}`] = [`Expected null: a ${kind} stage never rots`]
    else if (!Number.isInteger(value) || value < MIN_DAYS || value > MAX_DAYS) errors[`${prefix}${field}`] = [`Expected an integer from ${MIN_DAYS} to ${MAX_DAYS}, or null`]
  }
  if (Object.keys(errors).length) throw new ValidationError(errors)
}

/** 400 on `label` unless no other stage of the pipeline has it, compared case-insensitively. */
export function checkLabelFree(stages: readonly Stage[], label: string, exceptId?: string): void {
  const lower = label.toLowerCase()
  if (stages.some((s) => s.id !== exceptId && s.label.toLowerCase() === lower)) throw new ValidationError({ label: [`Another stage of this pipeline is already labelled "${label}"`] })
}

/** 400 on `field` when this stage is the only one of its kind: each pipeline keeps an open, a won and a lost stage. */
export function checkNotLastOfKind(stages: readonly Stage[], stage: Stage, field: string): void {
  if (!stages.some((s) => s.id !== stage.id && s.kind === stage.kind)) throw new ValidationError({ [field]: [`Expected the pipeline to keep at least one ${stage.kind} stage; this is the last one`] })
}

/** 400 on `field` while deals (or leads: `records`) are in the stage (the count is a fact the caller looked up). */
export function checkNoDeals(dealsInStage: number, field: string, records = 'deals'): void {
  if (dealsInStage > 0) throw new ValidationError({ [field]: [`Expected no ${records} in the stage; ${dealsInStage} still ${dealsInStage === 1 ? 'is' : 'are'} in it`] })
}
