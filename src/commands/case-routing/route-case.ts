import type { Deps } from '../../deps.ts'
import { decodeEvent } from '../../events/versions.ts'
import type { StreamGuard } from '../../eventstore/event-store.ts'
import { activeProfileIds } from '../../identity/users.ts'
import { openCaseCounts } from '../../projections/case/queries.ts'
import { routingRulesOf } from '../../projections/case-routing/queries.ts'
import { contactOf } from '../../projections/contact/contacts.ts'
import { liveTags } from '../../projections/tag/tags.ts'
import type { Caller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { fold } from '../decider.ts'
import type { DomainEvent } from '../decider.ts'
import type { Companion } from '../handle-command.ts'
import { caseDecider, caseStream } from '../case/case.ts'
import type { CaseEvent, CaseState } from '../case/case.ts'
import type { CaseFields } from '../case/fields.ts'
import type { RoutedCase } from './conditions.ts'
import { routingRuleDecider, routingRuleStreams } from './routing-rule.ts'
import type { RouteCase, RoutingRuleEvent } from './routing-rule.ts'

type RoutingDeps = Pick<Deps, 'db' | 'store' | 'clock'>
type CaseRouted = Extract<RoutingRuleEvent, { type: 'CaseRouted' }>

/** What inbound mail knows of a case that the case does not hold: the sender's domain and the mailbox it came to. */
export type RoutingContext = { from_email_domain?: string; mailbox_id?: string | null }

/** One rule's turn in the walk: its command, the revision of its stream decided on, and what it decided (null: it did not match). */
export type RoutingStep = { ruleId: string; ruleName: string; guard: StreamGuard; command: RouteCase; routed: CaseRouted | null }

const folded = async <S, E extends DomainEvent>(deps: RoutingDeps, decider: { initialState: () => S; evolve: (s: S, e: E) => S }, streamName: string) => {
  const recorded = await deps.store.readStream(streamName)
  return { state: fold(decider, recorded.map((e) => decodeEvent(e) as E)), guard: { streamName, revision: recorded.at(-1)?.revision ?? ('no_stream' as const) } }
}

/**
 * The walk of the organization's active routing rules over a case (the original's evaluate), in
 * their order, each decided by its stream as stored (its round-robin cursor): each rule that
 * matches routes, and one that says `stop_processing` ends the walk. Writes nothing: the test
 * route answers it, and routeCase appends it.
 */
export async function planRouting(deps: RoutingDeps, orgId: string, caseId: string, routed: RoutedCase): Promise<RoutingStep[]> {
  const steps: RoutingStep[] = []
  for (const rule of (await routingRulesOf(deps.db, orgId)).filter((row) => row.is_active)) {
    const { state, guard } = await folded(deps, routingRuleDecider, routingRuleStreams.stream(rule.id))
    const people = state.fields?.target_assignees ?? []
    const [active, openCases] = await Promise.all([activeProfileIds(deps.db, orgId, people), state.fields?.strategy === 'least_busy' ? openCaseCounts(deps.db, orgId, people) : {}])
    const command: RouteCase = { type: 'RouteCase', orgId, caseId, case: routed, activePeople: [...active], openCases, at: deps.clock().toISOString() }
    const [event] = routingRuleDecider.decide(command, state) as CaseRouted[]
    steps.push({ ruleId: rule.id, ruleName: rule.name, guard, command, routed: event ?? null })
    if (event && state.fields!.stop_processing) break
  }
  return steps
}

/** What the conditions read of a stored case, with inbound mail's context (else the domain of its first contact's email). */
export async function routedCaseOf(db: Deps['db'], orgId: string, fields: CaseFields, context: RoutingContext): Promise<RoutedCase> {
  const [tags, contact] = await Promise.all([liveTags(db, orgId, fields.tags), context.from_email_domain === undefined && fields.contacts[0] ? contactOf(db, orgId, fields.contacts[0]) : undefined])
  const domain = context.from_email_domain ?? contact?.email?.split('@')[1] ?? ''
  return { priority: fields.priority, case_type: fields.case_type, account: fields.account, tags: tags.map((tag) => tag.name), custom_fields: fields.custom_fields, from_email_domain: domain.toLowerCase(), mailbox_id: context.mailbox_id ?? null }
}

const withAll = (current: readonly string[], added: readonly (string | null)[]) => [...new Set([...current, ...added.filter((id): id is string => id !== null)])]

/**
 * Routes a case (issue 32; the original's post-save routing): the walk's picks join its assignees
 * and teams, as the system, in the same append as each rule's CaseRouted, guarded by the revision
 * of each rule's stream the walk decided on, so a round-robin pick is never made twice: a
 * concurrent pick moves the stream, and the whole is decided again. createCase routes a case
 * created unassigned; inbound mail calls this with its context. Answers what each rule decided.
 */
export async function routeCase(deps: RoutingDeps, caller: Caller, caseId: string, context: RoutingContext = {}, session: CommandSession = commandSession(deps.store, caller)): Promise<RoutingStep[]> {
  const rules = (await routingRulesOf(deps.db, caller.orgId)).filter((row) => row.is_active)
  if (!rules.length) return []
  let steps: RoutingStep[] = []
  const prepare = async () => {
    const { state } = await folded<CaseState, CaseEvent>(deps, caseDecider, caseStream(caseId))
    steps = state.exists && !state.deleted && state.orgId === caller.orgId ? await planRouting(deps, caller.orgId, caseId, await routedCaseOf(deps.db, caller.orgId, state.fields, context)) : []
    const picks = steps.flatMap((step) => (step.routed ? [step.routed.data] : []))
    const input = picks.length ? { assigned_to: withAll(state.fields.assigned_to, picks.map((pick) => pick.assigned_to)), teams: withAll(state.fields.teams, picks.map((pick) => pick.team)) } : {}
    // Routing is the system's act, whoever created the case.
    return { command: { type: 'UpdateCase' as const, orgId: caller.orgId, actor: { profileId: null, isAdmin: true, isSuperuser: false }, input, replace: false, customFields: [], at: deps.clock().toISOString() } }
  }
  const routed = (ruleId: string): Companion => ({
    async prepare() {
      const step = steps.find((candidate) => candidate.ruleId === ruleId)
      return { streamName: routingRuleStreams.stream(ruleId), guard: step?.guard, decide: (recorded) => (step ? routingRuleDecider.decide(step.command, fold(routingRuleDecider, recorded.map((e) => decodeEvent(e) as RoutingRuleEvent))) : []) }
    },
  })
  await session.run(caseDecider, caseStream(caseId), prepare, { also: rules.map((rule) => routed(rule.id)) })
  return steps
}
