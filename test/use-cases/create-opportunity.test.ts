import { randomUUID } from 'node:crypto'
import t from 'tap'
import { commandSession } from '../../src/commands/command-session.ts'
import { DEAL_NAME_SCOPE, createDeal } from '../../src/commands/opportunity/create-opportunity.ts'
import { opportunityStreams } from '../../src/commands/opportunity/opportunity.ts'
import { dealPipelines } from '../../src/commands/pipeline/kinds.ts'
import { ValidationError } from '../../src/errors.ts'
import { opportunityOf } from '../../src/projections/opportunity/opportunities.ts'
import { listPipelines } from '../../src/projections/pipeline/pipelines.ts'
import { testStore } from '../helpers/runner.ts'
import { USE_CASE_NOW, eventsAfter, givenAccount, givenDeps, givenOrganization, logEnd, nameHolder, rejectionOf, settled } from '../helpers/use-cases.ts'

/** Issue 16: createDeal runs from (deps, caller, input), with no HTTP app. */
t.test('createDeal, without an HTTP app', async (t) => {
  const { deps, database } = await givenDeps(t)
  const acme = await givenOrganization(deps, 'Acme')
  const globex = await givenOrganization(deps, 'Globex')
  const alice = await acme.addMember('alice@acme.test')

  const initech = await givenAccount(deps, acme.admin, 'Initech')

  t.test('given an organization with no pipeline, when a member creates a deal, then it lands in the default pipeline created on first use, its name claimed', async (t) => {
    const defaultId = dealPipelines.defaultId(acme.orgId)
    t.same(await listPipelines(deps.db, acme.orgId), [], 'no pipeline before the first deal')
    t.same(await deps.store.readStream(dealPipelines.streams.stream(defaultId)), [], 'no pipeline stream either')

    const { id, position } = await createDeal(deps, alice, { input: { name: 'Big Deal', account: initech, amount: '1000.00', probability: 40 } })
    await settled(deps, position)

    const pipelines = await listPipelines(deps.db, acme.orgId)
    t.equal(pipelines.length, 1, 'one pipeline, created on first use')
    t.match(pipelines[0], { id: defaultId, is_default: true, name: dealPipelines.defaultName })
    t.ok(pipelines[0]!.stages.length > 0, 'seeded with stages')
    const deal = await opportunityOf(deps.db, acme.orgId, id)
    t.match(deal, { id, org_id: acme.orgId, name: 'Big Deal', account: initech, amount: '1000.00', probability: 40, pipeline_id: defaultId, created_by: alice.profileId })
    t.ok(pipelines[0]!.stages.some((stage) => stage.id === deal?.stage_id), "the deal sits in one of the default pipeline's stages")
    t.equal(await nameHolder(deps, DEAL_NAME_SCOPE, acme.orgId, 'BIG deal'), id, 'the name is claimed by the deal, whatever its case')

    const events = await deps.store.readStream(opportunityStreams.stream(id))
    t.same(events.map((e) => e.type), ['OpportunityCreated'])
    t.match(events[0]!.metadata, { actorId: alice.profileId, orgId: acme.orgId, requestId: 'use-case-alice@acme.test' }, "the caller's identity travels in the metadata")

    const second = await createDeal(deps, acme.admin, { input: { name: 'Small Deal' } })
    await settled(deps, second.position)
    t.equal((await listPipelines(deps.db, acme.orgId)).length, 1, 'a later deal reuses the default pipeline')
    t.match(await opportunityOf(deps.db, acme.orgId, second.id), { pipeline_id: defaultId, account: null })
  })

  t.test('given a deal named "Big Deal", when another deal takes that name in another case, then it is refused under name and nothing is appended', async (t) => {
    const before = await logEnd(deps)
    const error = await rejectionOf(createDeal(deps, acme.admin, { input: { name: '  big DEAL ' } }))
    t.type(error, ValidationError)
    t.match(error, { statusCode: 400, errors: { name: [/already in use/] } })
    t.same(await eventsAfter(deps, before), [], 'no deal, no claim')

    const asCompany = await rejectionOf(createDeal(deps, acme.admin, { input: { name: 'Big Deal' }, field: 'company_name' }))
    t.match(asCompany, { errors: { company_name: [/already in use/] } }, 'reported under the field the caller names')
  })

  t.test('given a deal named "Big Deal" in Acme, when Globex names a deal the same, then it is created: names are unique per organization', async (t) => {
    const { id, position } = await createDeal(deps, globex.admin, { input: { name: 'Big Deal' } })
    await settled(deps, position)
    t.match(await opportunityOf(deps.db, globex.orgId, id), { org_id: globex.orgId, pipeline_id: dealPipelines.defaultId(globex.orgId) })
    t.not(dealPipelines.defaultId(globex.orgId), dealPipelines.defaultId(acme.orgId), "Globex's own default pipeline")
    t.equal(await nameHolder(deps, DEAL_NAME_SCOPE, globex.orgId, 'Big Deal'), id)
  })

  t.test('given the default pipeline folded and kept by this process, when another process adds a stage and locks one, then deals are decided on the pipeline as stored', async (t) => {
    const elsewhere = commandSession(testStore(t, database), acme.admin)
    const stream = dealPipelines.streams.stream(dealPipelines.defaultId(acme.orgId))
    const at = USE_CASE_NOW.toISOString()
    await elsewhere.run(dealPipelines.decider, stream, { type: 'AddStage', orgId: acme.orgId, stageId: randomUUID(), label: 'Demo', kind: 'open', at })
    const demo = await createDeal(deps, alice, { input: { name: 'Demo Deal', stage: 'DEMO' } })
    await settled(deps, demo.position)
    t.match(await opportunityOf(deps.db, acme.orgId, demo.id), { stage: 'DEMO' }, 'refused on the kept copy (no such stage), then decided again on a fresh read')

    const demoStage = (await listPipelines(deps.db, acme.orgId))[0]!.stages.find((stage) => stage.code === 'DEMO')!.id
    await elsewhere.run(dealPipelines.decider, stream, { type: 'LockStage', orgId: acme.orgId, stageId: demoStage, at })
    const error = await rejectionOf(createDeal(deps, alice, { input: { name: 'Locked Out', stage: 'DEMO' } }))
    t.type(error, ValidationError, 'the kept copy (unlocked) failed its guard; the stored pipeline refuses: the stage is locked')
    t.equal(await nameHolder(deps, DEAL_NAME_SCOPE, acme.orgId, 'Locked Out'), null)
  })

  t.test("given Acme's account, when a Globex caller points a deal at it, then it is refused under account (400) and nothing is appended", async (t) => {
    const before = await logEnd(deps)
    const error = await rejectionOf(createDeal(deps, globex.admin, { input: { name: 'Spy Deal', account: initech } }))
    t.type(error, ValidationError)
    t.match(error, { statusCode: 400, errors: { account: [String] } })
    t.same(await eventsAfter(deps, before), [], 'no deal, no claim of its name')
    t.equal(await nameHolder(deps, DEAL_NAME_SCOPE, globex.orgId, 'Spy Deal'), null)

    const globexAccount = await givenAccount(deps, globex.admin, 'Globex Corp')
    const own = await createDeal(deps, globex.admin, { input: { name: 'Spy Deal', account: globexAccount } })
    await settled(deps, own.position)
    t.match(await opportunityOf(deps.db, globex.orgId, own.id), { name: 'Spy Deal', account: globexAccount }, 'its own account is accepted, and the name was left free')
    t.same((await eventsAfter(deps, before)).map((e) => e.type), ['AccountCreated', 'NameClaimed', 'OpportunityCreated'], 'what the log holds since the refusal: the account and deal made after it')
  })
})
