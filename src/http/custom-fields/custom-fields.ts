import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { CUSTOM_FIELD_KEY, CUSTOM_FIELD_MODULES, customFieldDecider, customFieldKeyScope, customFieldStreams } from '../../commands/custom-field/custom-field.ts'
import type { CustomFieldModule, CustomFieldOption, CustomFieldType } from '../../commands/custom-field/custom-field.ts'
import { withClaimedName } from '../../commands/unique-name.ts'
import { ValidationError, orNotFound } from '../../errors.ts'
import { definitionOf, listDefinitions, recordsMissingValue } from '../../projections/custom-field/custom-fields.ts'
import type { Deps } from '../../deps.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { requestCommands } from '../kernel/commands.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, IdParams, Message, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean, formList, formNumber } from '../kernel/schemas/form-values.ts'
import { CustomField, FIELD_TYPES, FieldType, TARGET_MODELS, TargetModel, fieldBody, moduleOfTarget, typeOfFieldType } from './schemas.ts'

const REQUIRED = 'This field is required.'
const Key = z
  .string()
  .trim()
  .toLowerCase()
  .regex(CUSTOM_FIELD_KEY, 'key must be a lowercase slug starting with a letter (a-z, 0-9, _), at most 64 characters.')
  .describe('Stored under this key in a record\'s custom_fields (also written as cf_<key>); unique per organization and target_model (case-insensitively); never changes')
const Label = z.string().trim().min(1, 'This field may not be blank.').max(128)
const OptionText = z.string().trim().max(200)
/** A dropdown choice: {value, label}; a plain string (the older form) is both. */
const Options = formList(z.array(z.union([OptionText, z.object({ value: OptionText, label: OptionText })])).max(500))
  .transform((options): CustomFieldOption[] => options.map((option) => (typeof option === 'string' ? { value: option, label: option } : option)))
  .describe('Dropdown only: a non-empty list of {value, label} pairs with distinct values (records store the value)')
/** Deprecated spellings of today's clients: module (opportunities, leads, …) and type (boolean, select, …). */
const LegacyModule = z.enum(CUSTOM_FIELD_MODULES).describe('Deprecated alias of target_model: opportunities, leads, accounts, …')
const LegacyType = z.string().describe('Deprecated alias of field_type (boolean = checkbox, select = dropdown)')
const Flag = formBoolean(z.boolean())
const Order = formNumber(z.number().int().min(0).max(32767))

const CreateBody = z.object({
  target_model: TargetModel.optional().describe('Default: Opportunity'),
  key: Key,
  label: Label,
  field_type: FieldType.optional().describe('Required: text, textarea, number, date, checkbox or dropdown'),
  options: Options.optional(),
  is_required: Flag.optional().describe('Default false. A required field must have a value on every write of its records'),
  is_filterable: Flag.optional().describe('Default false'),
  display_order: Order.optional().describe('Default 0; lists are ordered by target_model, display_order, label'),
  is_active: Flag.optional().describe('Default true'),
  module: LegacyModule.optional(),
  type: LegacyType.optional(),
  required: Flag.optional().describe('Deprecated alias of is_required'),
})
const UpdateBody = z.object({
  label: Label.optional(),
  options: Options.optional().describe('Dropdown only: replaces the choices'),
  is_required: Flag.optional(),
  is_filterable: Flag.optional(),
  display_order: Order.optional(),
  is_active: Flag.optional().describe('true turns a deactivated field back on'),
  target_model: z.string().optional().describe('Immutable: accepted only when unchanged'),
  key: z.string().trim().toLowerCase().optional().describe('Immutable: accepted only when unchanged'),
  field_type: z.string().optional().describe('Immutable: accepted only when unchanged'),
  module: z.string().optional().describe('Deprecated alias of target_model (immutable)'),
  type: z.string().optional().describe('Deprecated alias of field_type (immutable)'),
  required: Flag.optional().describe('Deprecated alias of is_required'),
})
const ListQuery = z.object({
  target_model: TargetModel.optional(),
  module: LegacyModule.optional(),
  active_only: z.enum(['true', 'false']).optional().describe('true: active fields only'),
  include_counts: z.enum(['true', 'false']).optional().describe('false: leave out records_missing_value and totals (they count records)'),
})
const Totals = z
  .object({
    count: z.number().int(),
    active: z.number().int(),
    models_extended: z.number().int().describe('How many target models have an active field'),
    required_with_gaps: z.number().int().describe('Required fields some records hold no value for'),
  })
  .describe("Over the organization's whole set of fields, whatever the filters")
const DefinitionList = z.object({
  definitions: z.array(CustomField.extend({ records_missing_value: z.number().int().optional().describe("How many of the target model's records hold no value for the field (0 for models whose records carry no custom values yet); left out with include_counts=false") })),
  totals: Totals.nullable().describe('null with include_counts=false'),
})
const writeErrors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const
const tags = ['custom-fields']

/** A field type as given (the original's name, or a deprecated one of ours), or undefined when unknown. */
function fieldTypeOf(given: string): CustomFieldType | undefined {
  const name = given.trim().toLowerCase()
  if (name in FIELD_TYPES) return name as CustomFieldType
  return (Object.values(FIELD_TYPES) as string[]).includes(name) ? typeOfFieldType(name as (typeof FIELD_TYPES)[CustomFieldType]) : undefined
}

/**
 * Custom field definitions (the original's CustomFieldDefinition routes): any member reads; admins
 * define and change them. The key is unique per organization and target model, also under
 * concurrency; key, target_model and field_type never change. DELETE deactivates (records keep
 * their values; PUT {is_active: true} turns the field back on).
 */
export function customFieldRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  // Definitions are cached per process: each change says so once its read model is applied.
  const lookups = lookupsOf(deps)
  const found = (orgId: string, id: string) => orNotFound(definitionOf(db, orgId, id))
  return async (app) => {
    app.get(
      '/api/custom-fields/',
      { schema: { tags, summary: 'Custom field definitions of the organization (active and inactive), by target_model, display_order and label', querystring: ListQuery, response: { 200: DefinitionList, ...authErrors } } },
      async (request) => {
        const { orgId } = identityOf(request)
        const { target_model, module, active_only, include_counts } = request.query
        const filter = { module: target_model ? moduleOfTarget(target_model) : module, activeOnly: active_only === 'true' }
        const rows = await listDefinitions(db, orgId, filter)
        if (include_counts === 'false') return { definitions: rows.map(fieldBody), totals: null }
        const [all, missing] = await Promise.all([filter.module || filter.activeOnly ? listDefinitions(db, orgId, {}) : rows, recordsMissingValue(db, orgId)])
        const active = all.filter((row) => row.is_active)
        return {
          definitions: rows.map((row) => ({ ...fieldBody(row), records_missing_value: missing.get(row.id) ?? 0 })),
          totals: { count: all.length, active: active.length, models_extended: new Set(active.map((row) => row.module)).size, required_with_gaps: all.filter((row) => row.required && (missing.get(row.id) ?? 0) > 0).length },
        }
      },
    )

    app.post('/api/custom-fields/', { schema: { tags, summary: 'Define a custom field (admins)', body: CreateBody, response: { 201: CustomField, ...writeErrors } } }, async (request, reply) => {
      const identity = requireAdmin(request)
      const body = request.body
      const module: CustomFieldModule = body.target_model ? moduleOfTarget(body.target_model) : (body.module ?? 'opportunities')
      const given = body.field_type ?? body.type
      const fieldType = given === undefined ? undefined : fieldTypeOf(given)
      if (fieldType === undefined) throw new ValidationError({ field_type: [given === undefined ? REQUIRED : `Expected one of ${Object.values(FIELD_TYPES).join(', ')}.`] })
      const commands = requestCommands(deps, request, reply)
      const fieldId = randomUUID()
      await withClaimedName(commands.run, { scope: customFieldKeyScope(module), orgId: identity.orgId, ownerId: fieldId, name: body.key, field: 'key' }, (run) =>
        run(customFieldDecider, customFieldStreams.stream(fieldId), {
          type: 'DefineCustomField',
          fieldId,
          orgId: identity.orgId,
          module,
          key: body.key,
          label: body.label,
          fieldType,
          options: body.options ?? [],
          required: body.is_required ?? body.required ?? false,
          isFilterable: body.is_filterable ?? false,
          displayOrder: body.display_order ?? 0,
          isActive: body.is_active ?? true,
          actorId: identity.profileId,
          at: clock().toISOString(),
        }),
      )
      await commands.settle()
      lookups.changed()
      return reply.code(201).send(fieldBody(await found(identity.orgId, fieldId)))
    })

    app.get('/api/custom-fields/:id/', { schema: { tags, summary: 'One custom field definition', params: IdParams, response: { 200: CustomField, ...authErrors, 404: ErrorBody } } }, async (request) =>
      fieldBody(await found(identityOf(request).orgId, request.params.id)),
    )

    app.put(
      '/api/custom-fields/:id/',
      { schema: { tags, summary: 'Change a custom field (admins): the fields given; key, target_model and field_type are immutable', params: IdParams, body: UpdateBody, response: { 200: CustomField, ...writeErrors } } },
      async (request, reply) => {
        const { orgId } = requireAdmin(request)
        const current = await found(orgId, request.params.id)
        const body = request.body
        const targetModel = body.target_model ?? (body.module === undefined ? undefined : (TARGET_MODELS[body.module as CustomFieldModule] ?? body.module))
        const fieldType = body.field_type ?? body.type
        const frozen: [string, string | undefined, boolean, string][] = [
          ['key', body.key, body.key === current.key, current.key],
          ['target_model', targetModel, targetModel === TARGET_MODELS[current.module], TARGET_MODELS[current.module]],
          ['field_type', fieldType, fieldType !== undefined && fieldTypeOf(fieldType) === current.type, FIELD_TYPES[current.type]],
        ]
        const problems = Object.fromEntries(frozen.filter(([, given, same]) => given !== undefined && !same).map(([name, , , stored]) => [name, [`${name} cannot be changed after creation (it is "${stored}").`]]))
        if (Object.keys(problems).length) throw new ValidationError(problems)
        const commands = requestCommands(deps, request, reply)
        await commands.run(customFieldDecider, customFieldStreams.stream(current.id), {
          type: 'ChangeCustomField',
          orgId,
          label: body.label,
          options: body.options,
          required: body.is_required ?? body.required,
          isFilterable: body.is_filterable,
          displayOrder: body.display_order,
          isActive: body.is_active,
          at: clock().toISOString(),
        })
        await commands.settle()
        lookups.changed()
        return fieldBody(await found(orgId, current.id))
      },
    )

    app.delete('/api/custom-fields/:id/', { schema: { tags, summary: 'Deactivate a custom field (admins): hidden from records, which keep their values', params: IdParams, response: { 200: Message, ...authErrors, 404: ErrorBody } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      await commands.run(customFieldDecider, customFieldStreams.stream(current.id), { type: 'ChangeCustomField', orgId, isActive: false, at: clock().toISOString() })
      await commands.settle()
      lookups.changed()
      return { error: false as const, message: 'Custom field deactivated' }
    })
  }
}
