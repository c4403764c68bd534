import t from 'tap'
import type { Test } from 'tap'
import { customFieldDecider } from '../../src/commands/custom-field/custom-field.ts'
import type { CustomFieldCommand, CustomFieldEvent } from '../../src/commands/custom-field/custom-field.ts'
import { CustomFieldsError, customFieldFilter, customFilterValue, resolveCustomValues } from '../../src/commands/custom-field/values.ts'
import type { CustomValuesInput, CustomValuesMode, Definition } from '../../src/commands/custom-field/values.ts'
import { DomainError, NotFoundError, ValidationError } from '../../src/errors.ts'
import { eventsOf } from '../helpers/events.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const define: CustomFieldCommand = { type: 'DefineCustomField', fieldId: 'f1', orgId: org, module: 'opportunities', key: 'tier', label: 'Tier', fieldType: 'select', options: [{ value: 'Gold', label: 'Gold' }, { value: 'Silver', label: 'Silver' }], required: false, isActive: true, actorId: 'p1', at }
const defined = eventsOf<CustomFieldEvent>()('CustomFieldDefined', { field_id: 'f1', org_id: org, module: 'opportunities', key: 'tier', label: 'Tier', type: 'select', options: [{ value: 'Gold', label: 'Gold' }, { value: 'Silver', label: 'Silver' }], required: false, is_filterable: false, display_order: 0, is_active: true, created_by: 'p1', at })
const removed: CustomFieldEvent = { type: 'CustomFieldRemoved', data: { at } }
const change = (changes: Partial<Extract<CustomFieldCommand, { type: 'ChangeCustomField' }>>): CustomFieldCommand => ({ type: 'ChangeCustomField', orgId: org, at, ...changes })

t.test('custom field decider', async (t) => {
  const field = spec(t, customFieldDecider)
  field.given([]).when(define).then([defined])
  field.given([defined]).when(define).then([], 'defining again is a no-op')
  field.given([]).when({ ...define, key: 'Tier' }).thenRejects(ValidationError, { errors: { key: [String] } })
  field.given([]).when({ ...define, key: '1st' }).thenRejects(ValidationError, { errors: { key: [String] } })
  field.given([]).when({ ...define, key: `a${'b'.repeat(64)}` }).thenRejects(ValidationError, { errors: { key: [String] } })
  field.given([]).when({ ...define, options: [] }).thenRejects(ValidationError, { errors: { options: [/non-empty list/] } })
  field.given([]).when({ ...define, options: [{ value: 'gold', label: 'Gold' }, { value: 'gold', label: 'Golden' }] }).thenRejects(ValidationError, { errors: { options: [/Duplicate dropdown value/] } })
  field.given([]).when({ ...define, options: [{ value: ' ', label: 'Blank' }] }).thenRejects(ValidationError, { errors: { options: [/non-empty value and label/] } })
  field.given([]).when({ ...define, fieldType: 'text', options: [{ value: 'x', label: 'x' }] }).thenRejects(ValidationError, { errors: { options: [/only valid for dropdown/] } })
  field.given([]).when({ ...define, fieldType: 'number', options: [] }).then([{ ...defined, data: { ...defined.data, type: 'number', options: [] } }])

  field.given([defined]).when(change({ label: 'Level', required: true })).then([{ type: 'CustomFieldChanged', data: { label: 'Level', required: true, at } }])
  field.given([defined]).when(change({ options: [{ value: 'Gold', label: 'Gold' }, { value: 'Bronze', label: 'Bronze' }], isActive: false, displayOrder: 3, isFilterable: true })).then([{ type: 'CustomFieldChanged', data: { options: [{ value: 'Gold', label: 'Gold' }, { value: 'Bronze', label: 'Bronze' }], is_filterable: true, display_order: 3, is_active: false, at } }])
  field.given([defined]).when(change({ options: [{ value: 'Gold', label: 'Or' }, { value: 'Silver', label: 'Silver' }] })).then([{ type: 'CustomFieldChanged', data: { options: [{ value: 'Gold', label: 'Or' }, { value: 'Silver', label: 'Silver' }], at } }], 'a relabelled option is a change')
  field.given([defined]).when(change({ label: 'Tier', options: [{ value: 'Gold', label: 'Gold' }, { value: 'Silver', label: 'Silver' }], required: false, isActive: true })).then([], 'no change, no event')
  field.given([defined]).when(change({ key: 'tier', module: 'opportunities', fieldType: 'select', label: 'Tier' })).then([], 'echoing the immutable fields is fine')
  field.given([defined]).when(change({ key: 'level' })).thenRejects(ValidationError, { errors: { key: [/cannot be changed/] } })
  field.given([defined]).when(change({ module: 'leads' })).thenRejects(ValidationError, { errors: { module: [/cannot be changed/] } })
  field.given([defined]).when(change({ fieldType: 'text' })).thenRejects(ValidationError, { errors: { type: [/cannot be changed/] } })
  field.given([defined]).when(change({ options: [] })).thenRejects(ValidationError, { errors: { options: [String] } })
  field.given([defined]).when(change({ label: 'X', orgId: otherOrg })).thenRejects(NotFoundError)
  field.given([]).when(change({ label: 'X' })).thenRejects(NotFoundError)
  field.given([defined, removed]).when(change({ label: 'X' })).thenRejects(NotFoundError)

  field.given([defined]).when({ type: 'RemoveCustomField', orgId: org, at }).then([removed])
  field.given([defined, removed]).when({ type: 'RemoveCustomField', orgId: org, at }).then([], 'removing twice is a no-op')
  field.given([defined]).when({ type: 'RemoveCustomField', orgId: otherOrg, at }).thenRejects(NotFoundError)
  t.match(customFieldDecider.evolve(customFieldDecider.evolve(customFieldDecider.initialState(), defined), removed), { deleted: true, isActive: false, key: 'tier' })
})

const def = (key: string, type: Definition['type'], extra: Partial<Definition> = {}): Definition => ({ key, type, options: [], required: false, is_active: true, ...extra })
const tier = def('tier', 'select', { options: [{ value: 'Gold', label: 'Gold' }, { value: 'Silver', label: 'Silver' }] })
const definitions = [def('note', 'text'), def('seats', 'number'), def('renewal', 'date'), def('signed', 'boolean'), tier]

function resolve(input: Partial<CustomValuesInput>, options: { mode?: CustomValuesMode; current?: Record<string, unknown>; definitions?: Definition[] } = {}) {
  return resolveCustomValues(options.definitions ?? definitions, options.current ?? {}, { cfFields: {}, ...input }, options.mode ?? 'create')
}

/** The `errors.custom_fields` a resolve throws, or a failure when it does not. */
function rejection(t: Test, run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    t.type(error, CustomFieldsError)
    t.type(error, DomainError)
    t.equal((error as DomainError).statusCode, 400)
    return ((error as DomainError).errors as { custom_fields: unknown }).custom_fields
  }
  t.fail('expected a CustomFieldsError')
  return undefined
}

t.test('values: coercion of each type', async (t) => {
  t.same(resolve({ cfFields: { cf_note: '  hello  ', cf_seats: '12.5', cf_renewal: '2027-02-28', cf_signed: 'true', cf_tier: 'Gold' } }), { note: 'hello', seats: 12.5, renewal: '2027-02-28', signed: true, tier: 'Gold' }, 'form text becomes typed values')
  t.same(resolve({ customFields: { note: 'x', seats: 3, signed: false } }), { note: 'x', seats: 3, signed: false }, 'JSON values are taken as they are')
  t.same(resolve({ cfFields: { cf_seats: '-4', cf_signed: 'FALSE' } }), { seats: -4, signed: false })
  t.same(resolve({ cfFields: { cf_seats: '1e3' } }), { seats: 1000 })
  t.same(resolve({ cfFields: { cf_note: 42 } }), { note: '42' }, 'a number is text too')
  t.same(resolve({ cfFields: { cf_note: 'x'.repeat(1000) } }), { note: 'x'.repeat(1000) })
  t.match(rejection(t, () => resolve({ cfFields: { cf_note: 'x'.repeat(1001) } })), { note: [/at most 1000/] })
  t.match(rejection(t, () => resolve({ cfFields: { cf_note: { a: 1 } } })), { note: [String] })
  for (const bad of ['abc', '12,5', '0x10', 'Infinity', '1.2.3']) t.match(rejection(t, () => resolve({ cfFields: { cf_seats: bad } })), { seats: [/number/] }, `number "${bad}"`)
  t.match(rejection(t, () => resolve({ customFields: { seats: true } })), { seats: [/number/] })
  for (const bad of ['2027-02-30', '2027-13-01', '27-02-01', '2027-2-1', '2027-02-01T00:00:00Z']) t.match(rejection(t, () => resolve({ cfFields: { cf_renewal: bad } })), { renewal: [/YYYY-MM-DD/] }, `date "${bad}"`)
  t.same(resolve({ cfFields: { cf_renewal: '2028-02-29' } }), { renewal: '2028-02-29' }, 'a leap day')
  for (const bad of ['perhaps', '2', 'y']) t.match(rejection(t, () => resolve({ cfFields: { cf_signed: bad } })), { signed: [/true or false/] }, `boolean "${bad}"`)
  for (const [word, value] of [['yes', true], ['1', true], ['on', true], ['No', false], ['0', false], ['off', false]] as const) t.same(resolve({ cfFields: { cf_signed: word } }), { signed: value }, `the original's checkbox word "${word}"`)
  t.match(rejection(t, () => resolve({ cfFields: { cf_tier: 'Platinum' } })), { tier: [/not a valid choice/] }, 'select: one of the options')
  t.match(rejection(t, () => resolve({ cfFields: { cf_tier: 'gold' } })), { tier: [/not a valid choice/] }, 'select options are exact')
  t.same(resolve({ cfFields: { cf_tier: ' Silver ' } }), { tier: 'Silver' })
  t.same(resolve({ cfFields: { cf_note: '', cf_seats: null, cf_tier: '  ' } }), {}, 'blank or null is no value')
  const errors = rejection(t, () => resolve({ cfFields: { cf_seats: 'x', cf_tier: 'y' } }))
  t.same(Object.keys(errors as object).sort(), ['seats', 'tier'], 'every problem is reported at once')
})

t.test('values: sources, unknown keys and inactive definitions', async (t) => {
  t.same(resolve({ cfFields: { cf_tier: 'Gold' }, customFields: { tier: 'Silver' } }), { tier: 'Silver' }, 'the custom_fields object wins over cf_<key>')
  t.same(resolve({ cfFields: { cf_seats: '2' }, customFields: { tier: 'Gold' } }), { seats: 2, tier: 'Gold' }, 'both sources are read')
  t.same(resolve({ cfFields: { name: 'Deal', amount: '10', cf_seats: '2' } }), { seats: 2 }, 'the whole body may be passed: only cf_ keys count')
  t.same(resolve({ customFields: '{"seats": "7"}' }), { seats: 7 }, 'custom_fields as JSON text (a form body)')
  t.same(resolve({ customFields: '' }), {})
  t.match(rejection(t, () => resolve({ customFields: 'not json' })), [String])
  t.match(rejection(t, () => resolve({ customFields: ['a'] })), [String])
  t.same(resolve({ cfFields: { cf_unknown: 'x', cf_constructor: 'y' }, customFields: { nope: 1, __proto__: 'z', toString: 'w' } }), {}, 'unknown keys are dropped')
  const withInactive = [...definitions, def('legacy', 'text', { is_active: false, required: true })]
  t.same(resolve({ cfFields: { cf_legacy: 'x' } }, { definitions: withInactive }), {}, 'values of an inactive definition are dropped, and its required flag ignored')
  t.same(resolve({ cfFields: { cf_seats: '1' } }, { definitions: withInactive, mode: 'replace', current: { legacy: 'kept', seats: 5 } }), { legacy: 'kept', seats: 1 }, 'stored values of an inactive definition survive a replace')
  t.same(resolve({ cfFields: { cf_legacy: 'new' } }, { definitions: withInactive, mode: 'patch', current: { legacy: 'kept' } }), { legacy: 'kept' }, 'and cannot be changed while inactive')
  t.same(resolve({}, { mode: 'patch', current: { gone: 'x', seats: 'not a number', tier: 'Bronze' } }), { tier: 'Bronze' }, 'stored values of unknown keys or the wrong type are dropped; a removed option is kept')
})

t.test('values: PATCH merges, PUT and create replace', async (t) => {
  const current = { note: 'old', seats: 5, tier: 'Gold' }
  t.same(resolve({ cfFields: { cf_seats: '6' } }, { mode: 'patch', current }), { note: 'old', seats: 6, tier: 'Gold' }, 'patch merges')
  t.same(resolve({ customFields: { note: null } }, { mode: 'patch', current }), { seats: 5, tier: 'Gold' }, 'patch with null clears one value')
  t.same(resolve({ cfFields: { cf_seats: '6' } }, { mode: 'replace', current }), { seats: 6 }, 'replace keeps only what is named')
  t.same(resolve({}, { mode: 'replace', current }), {}, 'replace with nothing clears')
  t.same(resolve({ cfFields: { cf_seats: '6' } }, { mode: 'create', current }), { seats: 6 }, 'create ignores any current values')
})

t.test('values: required', async (t) => {
  const required = [...definitions, def('region', 'select', { options: [{ value: 'EU', label: 'Europe' }, { value: 'US', label: 'United States' }], required: true }), def('active', 'boolean', { required: true })]
  t.match(rejection(t, () => resolve({}, { definitions: required })), { region: ['This field is required.'], active: ['This field is required.'] }, 'on create')
  t.same(resolve({ cfFields: { cf_region: 'EU', cf_active: 'false' } }, { definitions: required }), { region: 'EU', active: false }, 'false is a value')
  t.match(rejection(t, () => resolve({ cfFields: { cf_region: 'EU' } }, { definitions: required, mode: 'replace', current: { region: 'US', active: true } })), { active: ['This field is required.'] }, 'on replace')
  t.same(resolve({ cfFields: { cf_seats: '1' } }, { definitions: required, mode: 'patch', current: { region: 'US', active: true } }), { region: 'US', active: true, seats: 1 }, 'patch keeps the stored required values')
  t.match(rejection(t, () => resolve({ cfFields: { cf_region: '' } }, { definitions: required, mode: 'patch', current: { region: 'US', active: true } })), { region: ['This field is required.'] }, 'patch clearing a required value')
  t.match(rejection(t, () => resolve({}, { definitions: required, mode: 'patch', current: { active: true } })), { region: ['This field is required.'] }, 'patch: the resulting set must hold every required value')
  t.match(rejection(t, () => resolve({ cfFields: { cf_region: 'Mars' } }, { definitions: required })), { region: [/not a valid choice/] }, 'an invalid value is reported as such, not as missing')
})

t.test('filter values', async (t) => {
  t.equal(customFilterValue({ type: 'number' }, '12.50'), 12.5)
  t.equal(customFilterValue({ type: 'number' }, 'abc'), null)
  t.equal(customFilterValue({ type: 'boolean' }, 'True'), true)
  t.equal(customFilterValue({ type: 'boolean' }, 'false'), false)
  t.equal(customFilterValue({ type: 'boolean' }, 'yes'), true)
  t.equal(customFilterValue({ type: 'boolean' }, 'perhaps'), null)
  t.equal(customFilterValue({ type: 'date' }, '2027-01-31'), '2027-01-31')
  t.equal(customFilterValue({ type: 'date' }, '2027-01-32'), null)
  t.equal(customFilterValue({ type: 'text' }, ' hello '), 'hello')
  t.equal(customFilterValue({ type: 'text' }, ' '), null)
  t.equal(customFilterValue({ type: 'select' }, 'Bronze'), 'Bronze', 'any select text: a record may hold a removed option')
  const withInactive = [...definitions, def('legacy', 'text', { is_active: false })]
  t.same(customFieldFilter(withInactive, { cf_seats: '3', cf_tier: 'Gold' }), { seats: 3, tier: 'Gold' })
  t.same(customFieldFilter(withInactive, { signed: 'true' }), { signed: true }, 'keys may come without the prefix')
  t.same(customFieldFilter(withInactive, {}), {})
  t.equal(customFieldFilter(withInactive, { cf_seats: 'many' }), null, 'a malformed value matches nothing')
  t.equal(customFieldFilter(withInactive, { cf_nope: 'x' }), null, 'an unknown key matches nothing')
  t.equal(customFieldFilter(withInactive, { cf_legacy: 'x' }), null, 'an inactive definition matches nothing')
})
