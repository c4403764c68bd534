import type { DomainEvent } from '../../src/commands/decider.ts'
import type { LeadEvent } from '../../src/commands/lead/lead.ts'
import type { OpportunityEvent } from '../../src/commands/opportunity/opportunity.ts'
import type { PipelineEvent } from '../../src/commands/pipeline/pipeline.ts'
import type { TagEvent } from '../../src/commands/tag/tag.ts'
import { emptyTask } from '../../src/commands/task/fields.ts'
import type { TaskEvent } from '../../src/commands/task/task.ts'
import type { TeamEvent } from '../../src/commands/team/team.ts'

/**
 * Event builders for tests: the deciders' own event types, so a test that seeds or expects events
 * is checked by the compiler against the storage contract instead of a `{ type, data } as any`.
 *
 *   const taskEvent = eventsOf<TaskEvent>()
 *   taskEvent('TaskDeleted', { by: null, at })   // data must be TaskDeleted's
 */
export const eventsOf =
  <E extends DomainEvent>() =>
  <T extends E['type']>(type: T, data: Extract<E, { type: T }>['data']): Extract<E, { type: T }> =>
    ({ type, data }) as Extract<E, { type: T }>

/** The data of one event type of a union. */
export type DataOf<E extends DomainEvent, T extends E['type']> = Extract<E, { type: T }>['data']

export const taskEvent = eventsOf<TaskEvent>()
export const tagEvent = eventsOf<TagEvent>()
export const teamEvent = eventsOf<TeamEvent>()
export const leadEvent = eventsOf<LeadEvent>()
export const opportunityEvent = eventsOf<OpportunityEvent>()
export const pipelineEvent = eventsOf<PipelineEvent>()

/** The instant the builders stamp when a test gives none (the HTTP and use-case tests' fixed clock). */
export const EVENT_AT = '2026-11-22T09:00:00.000Z'

type Creation<D, Required extends keyof D> = Pick<D, Required> & Partial<D>

/** A task as POST /api/tasks/ creates it with only a title: every other field empty. */
export const taskCreated = (data: Creation<DataOf<TaskEvent, 'TaskCreated'>, 'task_id' | 'org_id' | 'title'>) =>
  taskEvent('TaskCreated', { ...emptyTask(), created_by: null, at: EVENT_AT, ...data })

export const tagCreated = (data: Creation<DataOf<TagEvent, 'TagCreated'>, 'tag_id' | 'org_id' | 'name'>) =>
  tagEvent('TagCreated', { color: null, description: '', created_by: null, at: EVENT_AT, ...data })

export const teamCreated = (data: Creation<DataOf<TeamEvent, 'TeamCreated'>, 'team_id' | 'org_id' | 'name'>) =>
  teamEvent('TeamCreated', { description: null, users: [], created_by: null, at: EVENT_AT, ...data })
