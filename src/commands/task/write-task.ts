import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ForbiddenError, orNotFound } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { accountOf } from '../../projections/account/accounts.ts'
import { definitionsOf } from '../../projections/custom-field/custom-fields.ts'
import { leadOf } from '../../projections/lead/leads.ts'
import { opportunityOf } from '../../projections/opportunity/opportunities.ts'
import { caseOf } from '../../projections/case/queries.ts'
import { checkRelations } from '../../projections/record/relations.ts'
import { taskOf } from '../../projections/task/tasks.ts'
import type { TaskRow } from '../../projections/task/tasks.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import type { TaskParent } from './fields.ts'
import { mayAccessTask, taskDecider, taskStream } from './task.ts'
import { mayAccess } from '../../visibility/policy.ts'
import type { VisibleKind } from '../../visibility/policy.ts'
import type { TaskCommand, TaskInput } from './task.ts'

type TaskDeps = Pick<Deps, 'db' | 'store' | 'clock'>

/** A live task of the caller's organization (404 otherwise) that the caller may see: admin, creator or assignee (403 otherwise). */
export async function visibleTask(db: Deps['db'], caller: Caller, id: string): Promise<TaskRow> {
  const row = await orNotFound(taskOf(db, caller.orgId, id))
  if (!mayAccessTask({ createdBy: row.created_by, fields: row }, actorOfCaller(caller))) throw new ForbiddenError('Only an admin, the creator or an assignee may see or change this task')
  return row
}

type Parent = { created_by: string | null; assigned_to: string[] }

// Each parent's read model row and its kind in the visibility policy.
const parentLookups: Record<TaskParent, { kind: VisibleKind; rowOf: (db: Deps['db'], orgId: string, id: string) => Promise<Parent | undefined> }> = {
  account: { kind: 'Account', rowOf: accountOf },
  opportunity: { kind: 'Opportunity', rowOf: opportunityOf },
  lead: { kind: 'Lead', rowOf: leadOf },
  case: { kind: 'Case', rowOf: caseOf },
}

/** Whether the parent is a live record of the caller's organization that the caller may see (visibility/policy.ts). */
async function mayLinkTo(db: Deps['db'], caller: Caller, parent: keyof typeof parentLookups, id: string): Promise<boolean> {
  const { kind, rowOf } = parentLookups[parent]
  const row = await rowOf(db, caller.orgId, id)
  return row !== undefined && mayAccess(kind, { createdBy: row.created_by, assignedTo: row.assigned_to }, caller)
}

/**
 * 400 naming each parent or relation that is not a live record of the caller's organization, or
 * one the caller may not see (the same answer, so the route tells no one which ids exist); what
 * the task already holds (`current`) may stay.
 */
async function checkLinks(db: Deps['db'], caller: Caller, input: TaskInput, current?: TaskRow): Promise<void> {
  const errors: Record<string, string[]> = {}
  await Promise.all(
    (Object.keys(parentLookups) as (keyof typeof parentLookups)[]).map(async (parent) => {
      const id = input[parent]
      if (id && id !== current?.[parent] && !(await mayLinkTo(db, caller, parent, id))) errors[parent] = [`Expected ${parent === 'account' ? 'an' : 'a'} ${parent} of this organization.`]
    }),
  )
  await checkRelations(db, caller.orgId, input, errors, current)
}

/** The organization's custom field definitions for tasks, inactive ones included: what the decider checks values against. */
const taskDefinitions = (db: Deps['db'], orgId: string) => definitionsOf(db, orgId, 'tasks', { activeOnly: false })

/** Creates a task: its links checked, then one command with the custom field definitions. POST /api/tasks/ comes here; `id` is a chosen one (a sample-data pack's). */
export async function createTask(deps: TaskDeps, caller: Caller, input: TaskInput, session: CommandSession = commandSession(deps.store, caller), id: string = randomUUID()): Promise<{ id: string; position: Position | null }> {
  const [customFields] = await Promise.all([taskDefinitions(deps.db, caller.orgId), checkLinks(deps.db, caller, input)])
  await session.run(taskDecider, taskStream(id), { type: 'CreateTask', taskId: id, orgId: caller.orgId, actor: actorOfCaller(caller), input, customFields, at: deps.clock().toISOString() })
  return { id, position: session.position() }
}

/** Changes a task the caller may see (PUT replaces every field, PATCH the named ones), its links checked. */
export async function changeTask(deps: TaskDeps, caller: Caller, id: string, change: { input: TaskInput; replace: boolean }, session: CommandSession = commandSession(deps.store, caller)): Promise<{ position: Position | null }> {
  const current = await visibleTask(deps.db, caller, id)
  const [customFields] = await Promise.all([taskDefinitions(deps.db, caller.orgId), checkLinks(deps.db, caller, change.input, current)])
  await session.run(taskDecider, taskStream(id), { type: 'UpdateTask', orgId: caller.orgId, actor: actorOfCaller(caller), ...change, customFields, at: deps.clock().toISOString() })
  return { position: session.position() }
}

/** Deletes a task (admin or creator; the decider says 403 to anyone else, 404 to another organization). */
export async function deleteTask(deps: TaskDeps, caller: Caller, id: string, session: CommandSession = commandSession(deps.store, caller)): Promise<{ position: Position | null }> {
  const command: TaskCommand = { type: 'DeleteTask', orgId: caller.orgId, actor: actorOfCaller(caller), at: deps.clock().toISOString() }
  await session.run(taskDecider, taskStream(id), command)
  return { position: session.position() }
}
