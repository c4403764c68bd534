import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { CUSTOM_FIELD_KEY, customFieldDecider, customFieldKeyScope, customFieldStreams } from '../../commands/custom-field/custom-field.ts'
import { withClaimedName, withReleasedName } from '../../commands/unique-name.ts'
import { orNotFound } from '../../errors.ts'
import { definitionOf, listDefinitions } from '../../projections/custom-fields.ts'
import type { Deps } from '../../deps.ts'
import { requestCommands } from '../kernel/commands.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors, pageOf } from '../kernel/schemas/common.ts'
import { formBoolean, formList } from '../kernel/schemas/form-values.ts'
import { CustomField, FieldType, Module, fieldBody } from './schemas.ts'

const Key = z
  .string()
  .trim()
  .toLowerCase()
  .regex(CUSTOM_FIELD_KEY, 'Expected a key of lowercase letters, digits and underscores, starting with a letter (at most 50 characters).')
  .describe('Written as cf_<key> on records; unique per organization and module (case-insensitively); never changes')
const Label = z.string().trim().min(1, 'This field may not be blank.').max(100)
const Options = formList(z.array(z.string().trim().min(1, 'Options may not be blank.').max(200)).max(500)).describe('Select only: non-empty, distinct')
const CreateBody = z.object({
  module: Module.default('opportunities'),
  key: Key,
  label: Label,
  type: FieldType,
  options: Options.optional(),
  required: formBoolean(z.boolean()).default(false),
  is_active: formBoolean(z.boolean()).default(true),
})
const UpdateBody = z.object({
  label: Label,
  options: Options.optional().describe('Select only: replaces the choices; omitted: unchanged'),
  required: formBoolean(z.boolean()).optional().describe('Omitted: unchanged'),
  is_active: formBoolean(z.boolean()).optional().describe('Omitted: unchanged'),
  module: z.string().optional().describe('Immutable: accepted only when unchanged'),
  key: z.string().trim().toLowerCase().optional().describe('Immutable: accepted only when unchanged'),
  type: z.string().optional().describe('Immutable: accepted only when unchanged'),
})
const ListQuery = PageQuery.extend({ module: Module.optional() })
const writeErrors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const tags = ['custom-fields']


/**
 * Custom field definitions: any member reads; admins define, change and delete them. The key is
 * unique per organization and module, also under concurrency; key, module and type never change.
 * Deleting is soft and frees the key.
 */
export function customFieldRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  const found = (orgId: string, id: string) => orNotFound(definitionOf(db, orgId, id))
  return async (app) => {
    app.get('/api/custom-fields/', { schema: { tags, summary: 'Custom field definitions of the organization, by module and creation', querystring: ListQuery, response: { 200: pageOf(CustomField), ...authErrors } } }, async (request) => {
      const { orgId } = identityOf(request)
      const { limit, offset, module } = request.query
      const { count, rows } = await listDefinitions(db, orgId, { limit, offset, module })
      return { count, offset, limit, results: rows.map(fieldBody) }
    })

    app.post('/api/custom-fields/', { schema: { tags, summary: 'Define a custom field (admins)', body: CreateBody, response: { 201: CustomField, ...writeErrors } } }, async (request, reply) => {
      const identity = requireAdmin(request)
      const { module, key, label, type, options, required, is_active } = request.body
      const commands = requestCommands(deps, request, reply)
      const fieldId = randomUUID()
      await withClaimedName(commands.run, { scope: customFieldKeyScope(module), orgId: identity.orgId, ownerId: fieldId, name: key, field: 'key' }, (run) =>
        run(customFieldDecider, customFieldStreams.stream(fieldId), {
          type: 'DefineCustomField',
          fieldId,
          orgId: identity.orgId,
          module,
          key,
          label,
          fieldType: type,
          options: options ?? [],
          required,
          isActive: is_active,
          actorId: identity.profileId,
          at: clock().toISOString(),
        }),
      )
      await commands.settle()
      return reply.code(201).send(fieldBody(await found(identity.orgId, fieldId)))
    })

    app.get('/api/custom-fields/:id/', { schema: { tags, summary: 'One custom field definition', params: IdParams, response: { 200: CustomField, ...authErrors, 404: ErrorBody } } }, async (request) =>
      fieldBody(await found(identityOf(request).orgId, request.params.id)),
    )

    app.put('/api/custom-fields/:id/', { schema: { tags, summary: 'Change label, options, required or is_active (admins); key, module and type are immutable', params: IdParams, body: UpdateBody, response: { 200: CustomField, ...writeErrors } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      const { label, options, required, is_active, module, key, type } = request.body
      await commands.run(customFieldDecider, customFieldStreams.stream(current.id), { type: 'ChangeCustomField', orgId, label, options, required, isActive: is_active, module, key, fieldType: type, at: clock().toISOString() })
      await commands.settle()
      return fieldBody(await found(orgId, current.id))
    })

    app.delete('/api/custom-fields/:id/', { schema: { tags, summary: 'Delete a custom field definition (soft; admins). Its key becomes free', params: IdParams, response: { 200: Message, ...authErrors, 404: ErrorBody } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      await withReleasedName(commands.run, { scope: customFieldKeyScope(current.module), orgId, ownerId: current.id, name: current.key }, (run) =>
        run(customFieldDecider, customFieldStreams.stream(current.id), { type: 'RemoveCustomField', orgId, at: clock().toISOString() }),
      )
      await commands.settle()
      return { error: false as const, message: 'Custom field deleted' }
    })
  }
}
