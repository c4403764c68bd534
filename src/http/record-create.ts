import { randomUUID } from 'node:crypto'
import { replacing } from '../commands/record.ts'
import type { RecordCommand, RecordDecider, RecordNames } from '../commands/record.ts'
import { withOptionalClaim } from '../commands/unique-name.ts'
import type { Identity } from '../identity/identity.ts'
import type { RequestCommands } from './commands.ts'

/** What creating a plain record (account, contact) takes: see RecordWriteRoutes in record-routes.ts. */
export type RecordCreate<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames> = {
  empty: () => Fields
  decider: RecordDecider<Fields, N>
  commands: N['commands']
  stream: (id: string) => string
  checkRelations: (orgId: string, requested: Partial<Fields>, current?: Fields) => Promise<void>
  unique: { scope: string; field: Unique }
}

/**
 * Creates a record from a validated body: relations checked, the unique field claimed, the create
 * command run. POST and the CSV import both come here, so an imported row obeys the same rules.
 * Answers the new id; the caller settles. A given `id` makes it idempotent: creating the same id
 * again (a retried import row) records nothing and keeps the claim it holds.
 */
export async function createRecord<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames>(
  options: RecordCreate<Fields, Unique, N>,
  commands: RequestCommands,
  identity: Identity,
  body: Partial<Fields>,
  at: string,
  id: string = randomUUID(),
): Promise<string> {
  const { commands: names, unique } = options
  const fields = replacing(options.empty(), body)
  await options.checkRelations(identity.orgId, fields)
  // The command's id key is the module's own (`accountId`), which TypeScript cannot check through a computed key.
  const create = { type: names.create, [names.idKey]: id, orgId: identity.orgId, fields, actorId: identity.profileId, at } as RecordCommand<Fields, N>
  await withOptionalClaim(commands.run, { scope: unique.scope, orgId: identity.orgId, ownerId: id, name: fields[unique.field], field: unique.field }, () => commands.run(options.decider, options.stream(id), create))
  return id
}
