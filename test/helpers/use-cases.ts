import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { accountDecider, accountStream, emptyAccount } from '../../src/commands/account/account.ts'
import type { Caller } from '../../src/commands/caller.ts'
import { callerOfIdentity } from '../../src/commands/caller.ts'
import { commandSession } from '../../src/commands/command-session.ts'
import type { CommandSession } from '../../src/commands/command-session.ts'
import { createLead } from '../../src/commands/lead/create-lead.ts'
import type { LeadInput } from '../../src/commands/lead/lead.ts'
import { claimHolder } from '../../src/commands/unique-name.ts'
import { createDeal } from '../../src/commands/opportunity/create-opportunity.ts'
import type { DealInput } from '../../src/commands/opportunity/opportunity.ts'
import type { TaskInput } from '../../src/commands/task/task.ts'
import { createTask } from '../../src/commands/task/write-task.ts'
import { loadConfig } from '../../src/config.ts'
import type { Role } from '../../src/db/database.ts'
import type { Deps } from '../../src/deps.ts'
import type { Position, RecordedEvent } from '../../src/eventstore/event-store.ts'
import { START } from '../../src/eventstore/event-store.ts'
import { addProfile, bootstrapOrganization, ensureUser } from '../../src/identity/memberships.ts'
import { allProjectors } from '../../src/modules/modules.ts'
import { onTeardown } from './cleanup.ts'
import { freshDatabase } from './db.ts'
import type { TestDatabase } from './db.ts'
import { silentLogger, testRunner, testStore } from './runner.ts'

/**
 * Use-case tests (test/use-cases/): the service's real dependencies (a fresh database, the event
 * store, every projector running, a fixed clock) with no HTTP app, and callers seeded through the
 * same identity code the `bootstrap` CLI uses. Nothing here imports src/http or fastify.
 */

/** The same instant as the HTTP tests' fixed clock. */
export const USE_CASE_NOW = new Date('2026-11-22T09:00:00Z')

export type UseCaseWorld = { deps: Deps; database: TestDatabase; dataDir: string }

/** What src/runtime.ts connects for the server, on a fresh database of this test file, projections started and their tables built. */
export async function givenDeps(t: Test): Promise<UseCaseWorld> {
  // Every read model's tables come with the copy (as a first start leaves them): building thirty
  // projectors' tables here took past the read-your-writes budget on a loaded machine.
  const database = await freshDatabase(t, { template: 'app' })
  const store = testStore(t, database)
  const projections = testRunner(t, database, store, [...allProjectors])
  const dataDir = await mkdtemp(join(tmpdir(), 'crm-use-case-'))
  onTeardown(t, () => rm(dataDir, { recursive: true, force: true }))
  const { config } = loadConfig({ NODE_ENV: 'test', DATABASE_URL: database.url, DATA_DIR: dataDir })
  projections.start()
  await projections.tablesReady(config.readYourWritesTimeoutMs)
  return { deps: { config, db: database.db, store, projections, logger: silentLogger, clock: () => USE_CASE_NOW }, database, dataDir }
}

export type OrgCallers = { orgId: string; admin: Caller; addMember(email: string, role?: Role): Promise<Caller> }

const callerOf = (ids: { userId: string; profileId: string; orgId: string; email: string }, role: Role): Caller =>
  callerOfIdentity({ ...ids, role, credential: 'jwt', scopes: [], tokenId: null }, `use-case-${ids.email}`)

/** An organization with an admin (bootstrapOrganization, as the CLI does), and its members as use cases see them. */
export async function givenOrganization(deps: Pick<Deps, 'db'>, name: string): Promise<OrgCallers> {
  const email = `admin@${name.toLowerCase().replace(/\W/g, '')}.test`
  const created = await bootstrapOrganization(deps.db, { name, email })
  const orgId = created.org_id
  return {
    orgId,
    admin: callerOf({ userId: created.user_id, profileId: created.profile_id, orgId, email }, 'ADMIN'),
    async addMember(memberEmail, role = 'USER') {
      const userId = await ensureUser(deps.db, memberEmail)
      const profileId = await addProfile(deps.db, userId, orgId, role)
      return callerOf({ userId, profileId, orgId, email: memberEmail }, role)
    },
  }
}

/** Read-your-writes, as a route settles: waits until every read model has applied `position`. */
export async function settled(deps: Pick<Deps, 'projections' | 'config'>, position: Position | null): Promise<void> {
  if (!position) throw new Error('Expected the use case to answer a position to wait for')
  await deps.projections.waitFor(position, deps.config.readYourWritesTimeoutMs)
}

/** An account of the caller's organization, created through the account decider in the caller's session and settled. */
export async function givenAccount(deps: Deps, caller: Caller, name: string): Promise<string> {
  const accountId = randomUUID()
  const session = sessionOf(deps, caller)
  await session.run(accountDecider, accountStream(accountId), { type: 'CreateAccount', accountId, orgId: caller.orgId, fields: { ...emptyAccount(), name }, actorId: caller.profileId, at: deps.clock().toISOString() })
  await settled(deps, session.position())
  return accountId
}

/** A deal created by `caller` through createDeal (as POST /api/opportunities/), settled. */
export async function givenDeal(deps: Deps, caller: Caller, input: DealInput): Promise<string> {
  const { id, position } = await createDeal(deps, caller, { input })
  await settled(deps, position)
  return id
}

/** A lead created by `caller` through createLead (as POST /api/leads/), settled. */
export async function givenLead(deps: Deps, caller: Caller, input: LeadInput): Promise<string> {
  const { id, position } = await createLead(deps, caller, input)
  await settled(deps, position)
  return id
}

/** A task created by `caller` through createTask (as POST /api/tasks/), settled. */
export async function givenTask(deps: Deps, caller: Caller, input: TaskInput): Promise<string> {
  const { id, position } = await createTask(deps, caller, input)
  await settled(deps, position)
  return id
}

/** The end of the log as the store shows it now. */
export async function logEnd(deps: Pick<Deps, 'store'>): Promise<Position> {
  let after = START
  for (;;) {
    const page = await deps.store.readAll({ after, maxCount: 1000 })
    after = page.scannedTo
    if (page.isEnd) return after
  }
}

/** Every event appended after `after`, in log order. */
export async function eventsAfter(deps: Pick<Deps, 'store'>, after: Position): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = []
  for (;;) {
    const page = await deps.store.readAll({ after, maxCount: 1000 })
    events.push(...page.events)
    after = page.scannedTo
    if (page.isEnd) return events
  }
}

/** The owner of a unique name (`scope`, e.g. `account`), folded from its claim streams; null when free. */
export const nameHolder = (deps: Pick<Deps, 'store'>, scope: string, orgId: string, name: string): Promise<string | null> => claimHolder(deps.store, scope, orgId, name)

/** A caller's unit of work, to wait for what a refused use case appended (and undid) before it threw. */
export const sessionOf = (deps: Pick<Deps, 'store'>, caller: Caller): CommandSession => commandSession(deps.store, caller)

/** A CSV file on disk, as an upload leaves it (the record import takes it over). */
export async function csvFile(dir: string, name: string, lines: readonly string[]): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, lines.join('\r\n'))
  return path
}

/** The error a promise rejects with (a test failure when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('Expected a rejection, but the promise resolved')
}
