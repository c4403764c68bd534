import fc from 'fast-check'
import t from 'tap'
import { fold } from '../../src/commands/decider.ts'
import { opportunityDecider } from '../../src/commands/opportunity/opportunity.ts'
import type { DealInput, OpportunityCommand, OpportunityEvent, OpportunityState } from '../../src/commands/opportunity/opportunity.ts'
import type { Actor } from '../../src/commands/caller.ts'
import { evolvePipeline, initialPipelineState } from '../../src/commands/pipeline/pipeline.ts'
import { seededStages } from '../../src/commands/pipeline/stage-rules.ts'
import { DomainError } from '../../src/errors.ts'
import { pipelineEvent } from '../helpers/events.ts'

/**
 * Given any history of accepted deal commands, when any further command is decided, the folded
 * deal still keeps every §2.1 invariant: won ⇒ amount > 0 and closed_on; lost ⇒ closed_on;
 * open ⇒ closed_by null; probability within 0..100. Rejections (DomainErrors) leave the history
 * as it was; any other exception is a bug. FUZZ_RUNS scales the number of sequences.
 */
const RUNS = Math.max(50, Number(process.env.FUZZ_RUNS ?? 25) * 8)

const org = '00000000-0000-4000-8000-00000000000a'
const at = '2026-11-22T09:00:00.000Z'
const stages = seededStages(['s1', 's2', 's3', 's4', 's5', 's6'])
const pipelineState = [pipelineEvent('PipelineCreated', { pipeline_id: 'p1', org_id: org, name: 'Default', is_default: true, stages, created_by: null, at })].reduce(evolvePipeline, initialPipelineState())
const pipeline = { id: 'p1', state: pipelineState }
const codes = stages.map((s) => s.code)

const actors: Actor[] = [
  { profileId: 'admin', isAdmin: true, isSuperuser: false },
  { profileId: 'creator', isAdmin: false, isSuperuser: false },
  { profileId: 'assignee', isAdmin: false, isSuperuser: false },
  { profileId: 'stranger', isAdmin: false, isSuperuser: false },
]
const facts = (actor: Actor) => ({ orgId: org, actor, at, defaultCurrency: 'EUR', pipeline, customFields: [] })

const input: fc.Arbitrary<DealInput> = fc.record(
  {
    name: fc.constantFrom('Acme', 'Globex renewal'),
    stage: fc.constantFrom(...codes, 'NOT_A_STAGE'),
    amount: fc.constantFrom(null, '0', '0.00', '12.50', '1000000.00'),
    closed_on: fc.constantFrom(null, '2026-11-20', '2026-12-31'),
    probability: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 100 })),
    assigned_to: fc.constantFrom([], ['assignee'], ['assignee', 'stranger']),
    currency: fc.constantFrom(null, 'USD'),
  },
  { requiredKeys: [] },
)

const command: fc.Arbitrary<OpportunityCommand> = fc.oneof(
  fc.record({ actor: fc.constantFrom(...actors), input }).map(({ actor, input }) => ({ type: 'CreateOpportunity' as const, opportunityId: 'd1', input: { name: 'Deal', ...input }, ...facts(actor) })),
  fc.record({ actor: fc.constantFrom(...actors), input, replace: fc.boolean() }).map(({ actor, input, replace }) => ({ type: 'UpdateOpportunity' as const, input: replace ? { name: 'Deal', ...input } : input, replace, ...facts(actor) })),
  fc.record({ actor: fc.constantFrom(...actors), column: fc.constantFrom(...codes), order: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2 ** 40 })), today: fc.constantFrom('2026-11-22', '2027-01-01') }).map(
    ({ actor, column, order, today }) => ({ type: 'MoveOpportunity' as const, columnId: column, kanbanOrder: order, today, ...facts(actor) }),
  ),
  fc.record({ actor: fc.constantFrom(...actors), comment: fc.string({ maxLength: 20 }) }).map(({ actor, comment }) => ({ type: 'AddComment' as const, orgId: org, actor, commentId: `c-${comment.length}`, comment: comment || 'x', at })),
  fc.constantFrom(...actors).map((actor) => ({ type: 'DeleteOpportunity' as const, orgId: org, actor, at })),
)

const isZero = (amount: string) => /^0*(\.0*)?$/.test(amount)

/** Every §2.1 invariant of a live deal; the broken ones, by name. */
function broken(state: OpportunityState): string[] {
  if (!state.exists || !state.placement) return []
  const { fields, placement } = state
  const problems: string[] = []
  if (placement.stage_kind === 'won' && (fields.amount === null || isZero(fields.amount))) problems.push('won without an amount above 0')
  if (placement.stage_kind !== 'open' && fields.closed_on === null) problems.push(`${placement.stage_kind} without closed_on`)
  if (placement.stage_kind === 'open' && fields.closed_by !== null) problems.push('open with closed_by')
  if (fields.probability !== null && (fields.probability < 0 || fields.probability > 100)) problems.push(`probability ${fields.probability}`)
  if (!codes.includes(placement.stage)) problems.push(`unknown stage ${placement.stage}`)
  return problems
}

t.test('any sequence of deal commands keeps every §2.1 invariant', async (t) => {
  let accepted = 0
  let rejected = 0
  const result = fc.check(
    fc.property(fc.array(command, { minLength: 1, maxLength: 25 }), (commands) => {
      const history: OpportunityEvent[] = []
      for (const cmd of commands) {
        let events: readonly OpportunityEvent[]
        try {
          // given the accepted history, when this command...
          events = opportunityDecider.decide(cmd, fold(opportunityDecider, history))
        } catch (error) {
          if (!(error instanceof DomainError)) throw error
          rejected++
          continue
        }
        accepted++
        history.push(...events)
        // ...then the deal still holds every rule.
        const problems = broken(fold(opportunityDecider, history))
        if (problems.length) throw new Error(`${problems.join(', ')} after ${cmd.type}`)
      }
      return true
    }),
    { numRuns: RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
  )
  t.notOk(result.failed, result.failed ? `counterexample (seed ${result.seed}): ${fc.stringify(result.counterexample)}\n${String(result.errorInstance)}` : `${RUNS} sequences`)
  t.comment(`${accepted} commands accepted, ${rejected} rejected across ${RUNS} sequences`)
  t.ok(accepted > RUNS, 'the generator reaches accepted commands, not only rejections')
})
