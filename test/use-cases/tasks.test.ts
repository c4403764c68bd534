import { randomUUID } from 'node:crypto'
import t from 'tap'
import { taskStream } from '../../src/commands/task/task.ts'
import { changeTask, createTask, deleteTask } from '../../src/commands/task/write-task.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { taskOf } from '../../src/projections/task/tasks.ts'
import { eventsAfter, givenAccount, givenDeal, givenDeps, givenLead, givenOrganization, givenTask, logEnd, rejectionOf, settled } from '../helpers/use-cases.ts'

/**
 * Tasks' use cases (createTask, changeTask, deleteTask) with no HTTP app: who may write a task,
 * and which parent it may name. A parent must be a live record of the caller's organization that
 * the caller may see (src/visibility/policy.ts); one the caller may not see is refused exactly as
 * an id that does not exist, so the answer tells no one which ids exist.
 */
t.test('tasks, without an HTTP app', async (t) => {
  const { deps } = await givenDeps(t)
  const acme = await givenOrganization(deps, 'Acme')
  const globex = await givenOrganization(deps, 'Globex')
  const alice = await acme.addMember('alice@acme.test')
  const bob = await acme.addMember('bob@acme.test')
  // Members always have a profile (only an API key calls with none).
  const [aliceId, bobId] = [alice.profileId!, bob.profileId!]

  const adminsDeal = await givenDeal(deps, acme.admin, { name: "The admin's deal" })
  const alicesDeal = await givenDeal(deps, acme.admin, { name: 'Assigned to Alice', assigned_to: [aliceId] })
  const alicesLead = await givenLead(deps, alice, { title: 'Her lead', first_name: 'Ada' })
  const adminsLead = await givenLead(deps, acme.admin, { title: "The admin's lead", first_name: 'Grace' })
  const globexLead = await givenLead(deps, globex.admin, { title: 'Elsewhere', first_name: 'Linus' })
  const initech = await givenAccount(deps, acme.admin, 'Initech')

  /** The refusal of a create, and that it appended nothing. */
  const refusedCreate = async (caller: typeof alice, input: Parameters<typeof createTask>[2]) => {
    const before = await logEnd(deps)
    const error = await rejectionOf(createTask(deps, caller, input))
    t.same(await eventsAfter(deps, before), [], 'nothing appended')
    return error
  }

  t.test('given a member, when she creates a task with a title, then it is stored as hers, her identity in the metadata', async (t) => {
    const { id, position } = await createTask(deps, alice, { title: 'Call Ada', priority: 'High' })
    await settled(deps, position)
    t.match(await taskOf(deps.db, acme.orgId, id), { id, title: 'Call Ada', priority: 'High', status: 'New', created_by: alice.profileId, assigned_to: [] })
    const events = await deps.store.readStream(taskStream(id))
    t.same(events.map((e) => e.type), ['TaskCreated'])
    t.match(events[0]!.metadata, { actorId: alice.profileId, orgId: acme.orgId })
    t.equal(await taskOf(deps.db, globex.orgId, id), undefined, 'not a task of another organization')
  })

  t.test('a task needs a title, and has at most one parent', async (t) => {
    t.match(await refusedCreate(alice, { title: '  ' }), { statusCode: 400, errors: { title: [String] } })
    const two = await refusedCreate(acme.admin, { title: 'Two parents', account: initech, opportunity: adminsDeal })
    t.type(two, ValidationError)
    t.match(two, { errors: { account: [/only be linked to one parent/] } })
    t.match(await refusedCreate(acme.admin, { title: 'A case', case: randomUUID() }), { errors: { case: [/a case of this organization/] } }, 'a case parent is checked like the others: an unknown one is refused')
  })

  t.test('parents: a member links only records she may see; one she may not is refused as an unknown id is', async (t) => {
    for (const [field, id] of [['opportunity', alicesDeal], ['lead', alicesLead]] as const) {
      const { id: task, position } = await createTask(deps, alice, { title: `Under ${field}`, [field]: id })
      await settled(deps, position)
      t.match(await taskOf(deps.db, acme.orgId, task), { [field]: id }, `a ${field} she is assigned to or created`)
    }
    for (const [field, hidden] of [['opportunity', adminsDeal], ['lead', adminsLead]] as const) {
      const refused = await refusedCreate(alice, { title: 'Peek', [field]: hidden })
      t.type(refused, ValidationError, `a ${field} she may not see`)
      const unknown = await refusedCreate(alice, { title: 'Peek', [field]: randomUUID() })
      t.same((refused as ValidationError).errors, (unknown as ValidationError).errors, 'the same answer as for an id that does not exist')
    }
    t.match(await refusedCreate(acme.admin, { title: 'Across', lead: globexLead }), { errors: { lead: [String] } }, "not even an admin links another organization's lead")
    const { position } = await createTask(deps, acme.admin, { title: 'Admin sees all', opportunity: adminsDeal })
    await settled(deps, position)
  })

  t.test('update: admin, creator or assignee; a parent already held may stay, a new one must be visible', async (t) => {
    const task = await givenTask(deps, acme.admin, { title: 'Follow up', opportunity: adminsDeal, assigned_to: [aliceId] })
    const patched = await changeTask(deps, alice, task, { input: { status: 'In Progress' }, replace: false })
    await settled(deps, patched.position)
    t.match(await taskOf(deps.db, acme.orgId, task), { status: 'In Progress', opportunity: adminsDeal }, 'an assignee edits it')
    const replaced = await changeTask(deps, alice, task, { input: { title: 'Follow up again', opportunity: adminsDeal, assigned_to: [aliceId] }, replace: true })
    await settled(deps, replaced.position)
    t.match(await taskOf(deps.db, acme.orgId, task), { title: 'Follow up again', opportunity: adminsDeal, status: 'New' }, 'a PUT may name the parent the task holds, though she may not open it')

    const before = await logEnd(deps)
    t.match(await rejectionOf(changeTask(deps, alice, task, { input: { opportunity: null, lead: adminsLead }, replace: false })), { statusCode: 400, errors: { lead: [String] } }, 'a new parent she may not see')
    t.type(await rejectionOf(changeTask(deps, bob, task, { input: { title: 'Mine now' }, replace: false })), ForbiddenError, 'neither creator nor assignee')
    t.type(await rejectionOf(changeTask(deps, globex.admin, task, { input: { title: 'Ours' }, replace: false })), NotFoundError, "another organization's admin")
    t.same(await eventsAfter(deps, before), [], 'refusals append nothing')
  })

  t.test('delete: admin or creator, not an assignee; deleting twice appends nothing more', async (t) => {
    const task = await givenTask(deps, alice, { title: 'Doomed', assigned_to: [bobId] })
    t.type(await rejectionOf(deleteTask(deps, bob, task)), ForbiddenError, 'an assignee')
    t.type(await rejectionOf(deleteTask(deps, globex.admin, task)), NotFoundError, 'another organization')
    const { position } = await deleteTask(deps, alice, task)
    await settled(deps, position)
    t.equal(await taskOf(deps.db, acme.orgId, task), undefined, 'gone from the read model')
    const before = await logEnd(deps)
    t.equal((await deleteTask(deps, acme.admin, task)).position, null, 'already deleted: no events, nothing to wait for')
    t.same(await eventsAfter(deps, before), [])
    t.type(await rejectionOf(changeTask(deps, alice, task, { input: { title: 'Back' }, replace: false })), NotFoundError, 'a deleted task cannot be changed')
  })
})
