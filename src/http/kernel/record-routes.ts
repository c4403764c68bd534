import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { replacing } from '../../commands/record.ts'
import type { RecordNames } from '../../commands/record.ts'
import { createRecord } from '../../commands/record-create.ts'
import type { RecordModule } from '../../commands/record-create.ts'
import { withReleasedName, withRenamedClaim } from '../../commands/unique-name.ts'
import { isAdmin } from '../../identity/identity.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, requestCommands, settle } from './commands.ts'
import { identityOf } from './auth.ts'
import { importsListed, recordImportRoutes } from './record-import-routes.ts'
import { IdParams, Message, authErrors } from './schemas/common.ts'
import { Created } from './schemas/records.ts'
import type { CommandRunner } from '../../commands/command-runner.ts'

type App = Parameters<FastifyPluginAsyncZod>[0]

/** What the write routes of a plain record module need: the module as its use cases see it, and how the routes name and find its records. */
export type RecordWriteRoutes<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames> = RecordModule<Fields, Unique, N> & {
  /** For summaries and messages, e.g. `{ title: 'Account', indefinite: 'an account' }`. */
  noun: { title: string; indefinite: string }
  /** The all-optional form of the body (PATCH). */
  patch: z.ZodType<Partial<Fields>>
  /** The live record of the organization, or a 404. */
  found: (orgId: string, id: string) => Promise<Fields & { id: string }>
  /** Serve CSV import (`/api/<plural>/import/preview/` and `commit/`, record-import-routes.ts); by default when the spec's route index lists them. */
  csvImport?: boolean
}

/**
 * POST, PUT, PATCH and DELETE of a plain record (accounts, contacts): any member creates and edits,
 * an admin or the creator deletes (soft), and the unique field's claim follows every change.
 */
export function recordWriteRoutes<Fields extends Record<Unique, string | null>, Unique extends keyof Fields & string, N extends RecordNames>(app: App, deps: Deps, options: RecordWriteRoutes<Fields, Unique, N>): void {
  const { plural, noun, decider, commands: names, stream, found, unique } = options
  const path = `/api/${plural}/:id/`
  const at = () => deps.clock().toISOString()
  // The route's zod schema has validated the body; the type provider cannot resolve its type through the generic `Fields`.
  const bodyOf = (request: { body: unknown }) => request.body as Partial<Fields>

  app.post(`/api/${plural}/`, { schema: { tags: [plural], summary: `Create ${noun.indefinite}`, body: options.body, response: { 200: Created, ...authErrors } } }, async (request, reply) => {
    const { id, position } = await createRecord(deps, callerOf(request), options, bodyOf(request))
    await settle(deps, reply, position)
    return { error: false as const, message: `${noun.title} created`, id }
  })

  const update = async (request: FastifyRequest, reply: FastifyReply, id: string, requested: Partial<Fields>) => {
    const { orgId } = identityOf(request)
    const current = await found(orgId, id)
    await options.checkRelations(orgId, requested, current)
    const commands = requestCommands(deps, request, reply)
    const value = requested[unique.field] === undefined ? current[unique.field] : (requested[unique.field] as string | null)
    await withRenamedClaim(commands.run, { scope: unique.scope, orgId, ownerId: current.id, name: value, previousName: current[unique.field], field: unique.field }, (run) =>
      run(decider, stream(current.id), { type: names.update, orgId, changes: requested, at: at() }),
    )
    await commands.settle()
    return { error: false as const, message: `${noun.title} updated` }
  }

  const replaceDescription = 'Every field is replaced: fields left out take their empty value, relation lists left out are cleared.'
  app.put(path, { schema: { tags: [plural], summary: `Replace ${noun.indefinite}`, description: replaceDescription, params: IdParams, body: options.body, response: { 200: Message, ...authErrors } } }, (request, reply) =>
    update(request, reply, request.params.id, replacing(options.empty(), bodyOf(request))),
  )

  app.patch(path, { schema: { tags: [plural], summary: `Change the named fields of ${noun.indefinite}`, description: 'Fields and relation lists left out keep their values.', params: IdParams, body: options.patch, response: { 200: Message, ...authErrors } } }, (request, reply) =>
    update(request, reply, request.params.id, bodyOf(request)),
  )

  app.delete(path, { schema: { tags: [plural], summary: `Delete ${noun.indefinite} (soft; admins or its creator). Its ${unique.field} becomes free`, params: IdParams, response: { 200: Message, ...authErrors } } }, async (request, reply) => {
    const identity = identityOf(request)
    const current = await found(identity.orgId, request.params.id)
    const commands = requestCommands(deps, request, reply)
    const remove = (run: CommandRunner = commands.run) => run(decider, stream(current.id), { type: names.delete, orgId: identity.orgId, actor: { profileId: identity.profileId, isAdmin: isAdmin(identity) }, at: at() })
    const value = current[unique.field]
    await (value === null ? remove() : withReleasedName(commands.run, { scope: unique.scope, orgId: identity.orgId, ownerId: current.id, name: value }, remove))
    await commands.settle()
    return { error: false as const, message: `${noun.title} deleted` }
  })

  if (options.csvImport ?? importsListed(plural)) recordImportRoutes(app, deps, options)
}
