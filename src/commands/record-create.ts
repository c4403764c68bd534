import { randomUUID } from 'node:crypto'
import type { z } from 'zod'
import type { Deps } from '../deps.ts'
import type { Position } from '../eventstore/event-store.ts'
import type { Caller } from './caller.ts'
import { commandSession } from './command-session.ts'
import type { CommandSession } from './command-session.ts'
import { replacing } from './record.ts'
import type { RecordCommand, RecordDecider, RecordNames } from './record.ts'
import { withOptionalClaim } from './unique-name.ts'

/** What creating a record of a plain module needs: no body schema (the caller has validated), no name. */
export type RecordCreation<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames> = Omit<RecordModule<Fields, Unique, N>, 'plural' | 'body'>

/** A plain record module (accounts, contacts) as its create and CSV import use cases see it. */
export type RecordModule<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames> = {
  /** The module's name in paths and read-model tables, e.g. `contacts`. */
  plural: string
  /** The create body schema: what a CSV row must satisfy to become a record. */
  body: z.ZodType<Partial<Fields>>
  empty: () => Fields
  decider: RecordDecider<Fields, N>
  commands: N['commands']
  stream: (id: string) => string
  /** The relation checks made before a command (deciders stay pure); ids the record holds (`current`) may stay. */
  checkRelations: (orgId: string, requested: Partial<Fields>, current?: Fields) => Promise<void>
  /** The field unique per organization (a name claim of `scope`). */
  unique: { scope: string; field: Unique }
}

/**
 * Creates a record of `module` from a validated body: relations checked, the unique field claimed,
 * the create command run. POST and the CSV import both come here, so an imported row obeys the same
 * rules. Answers the new id and the position to wait for. A given `id` makes it idempotent: creating
 * the same id again (a retried import row) records nothing and keeps the claim it holds.
 */
export async function createRecord<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames>(
  deps: Pick<Deps, 'store' | 'clock'>,
  caller: Caller,
  module: RecordCreation<Fields, Unique, N>,
  body: Partial<Fields>,
  options: { id?: string; session?: CommandSession } = {},
): Promise<{ id: string; position: Position | null }> {
  const { commands: names, unique } = module
  const session = options.session ?? commandSession(deps.store, caller)
  const id = options.id ?? randomUUID()
  const fields = replacing(module.empty(), body)
  await module.checkRelations(caller.orgId, fields)
  // The command's id key is the module's own (`accountId`), which TypeScript cannot check through a computed key.
  const command = { type: names.create, [names.idKey]: id, orgId: caller.orgId, fields, actorId: caller.profileId, at: deps.clock().toISOString() } as RecordCommand<Fields, N>
  await withOptionalClaim(session.run, { scope: unique.scope, orgId: caller.orgId, ownerId: id, name: fields[unique.field], field: unique.field }, (run) => run(module.decider, module.stream(id), command))
  return { id, position: session.position() }
}
