import t from 'tap'
import { macroDecider } from '../../src/commands/macro/macro.ts'
import type { MacroEvent } from '../../src/commands/macro/macro.ts'
import { PLACEHOLDERS, renderMacro, unknownPlaceholders } from '../../src/commands/macro/placeholders.ts'
import { DomainError, ForbiddenError, NotFoundError } from '../../src/errors.ts'
import { spec } from '../helpers/given-when-then.ts'

const org = '00000000-0000-4000-8000-00000000000a'
const otherOrg = '00000000-0000-4000-8000-00000000000b'
const at = '2026-11-22T09:00:00.000Z'
const admin = { profileId: 'admin', isAdmin: true }
const ann = { profileId: 'ann', isAdmin: false }
const bob = { profileId: 'bob', isAdmin: false }
const orgMacro: MacroEvent = { type: 'MacroCreated', data: { macro_id: 'm1', org_id: org, title: 'Thanks', body: 'Hi %customer_name%', scope: 'org', owner: null, is_active: true, created_by: 'admin', at } }
const annsMacro: MacroEvent = { type: 'MacroCreated', data: { ...orgMacro.data, scope: 'personal', owner: 'ann', created_by: 'ann' } }
const fields = { title: 'Thanks', body: 'Hi %customer_name%', is_active: true }

t.test('macro decider: scopes and owners', async (t) => {
  const macro = spec(t, macroDecider)
  macro.given([]).when({ type: 'CreateMacro', macroId: 'm1', orgId: org, fields: { ...fields, scope: 'org' }, actor: admin, at }).then([orgMacro])
  macro.given([]).when({ type: 'CreateMacro', macroId: 'm1', orgId: org, fields: { ...fields, scope: 'org' }, actor: ann, at }).thenRejects(ForbiddenError)
  macro.given([]).when({ type: 'CreateMacro', macroId: 'm1', orgId: org, fields: { ...fields, scope: 'personal' }, actor: ann, at }).then([annsMacro], "a member's personal macro is theirs")
  macro.given([]).when({ type: 'CreateMacro', macroId: 'm1', orgId: org, fields: { ...fields, scope: 'personal' }, actor: { profileId: null, isAdmin: true }, at }).thenRejects(ForbiddenError)
  macro.given([orgMacro]).when({ type: 'CreateMacro', macroId: 'm1', orgId: org, fields: { ...fields, scope: 'org' }, actor: admin, at }).then([], 'creating again is a no-op')

  macro.given([orgMacro]).when({ type: 'ChangeMacro', orgId: org, changes: { title: 'Thank you' }, actor: admin, at }).then([{ type: 'MacroUpdated', data: { title: 'Thank you', by: 'admin', at } }])
  macro.given([orgMacro]).when({ type: 'ChangeMacro', orgId: org, changes: { title: 'Thanks', body: 'Hi %customer_name%' }, actor: admin, at }).then([], 'no change, no event')
  macro.given([orgMacro]).when({ type: 'ChangeMacro', orgId: org, changes: { title: 'X' }, actor: ann, at }).thenRejects(ForbiddenError)
  macro.given([orgMacro]).when({ type: 'ChangeMacro', orgId: otherOrg, changes: { title: 'X' }, actor: admin, at }).thenRejects(NotFoundError)
  macro.given([annsMacro]).when({ type: 'ChangeMacro', orgId: org, changes: { title: 'X' }, actor: bob, at }).thenRejects(NotFoundError)
  macro.given([annsMacro]).when({ type: 'ChangeMacro', orgId: org, changes: { title: 'X' }, actor: admin, at }).thenRejects(NotFoundError)
  macro.given([annsMacro]).when({ type: 'ChangeMacro', orgId: org, changes: { scope: 'org' }, actor: ann, at }).thenRejects(ForbiddenError)
  const annAdmin = { profileId: 'ann', isAdmin: true }
  macro.given([annsMacro]).when({ type: 'ChangeMacro', orgId: org, changes: { scope: 'org' }, actor: annAdmin, at }).then([{ type: 'MacroUpdated', data: { scope: 'org', owner: null, by: 'ann', at } }], 'an admin shares their own macro: it loses its owner')
  macro.given([orgMacro]).when({ type: 'ChangeMacro', orgId: org, changes: { scope: 'personal' }, actor: annAdmin, at }).then([{ type: 'MacroUpdated', data: { scope: 'personal', owner: 'ann', by: 'ann', at } }], 'an org macro made personal becomes its admin\'s')
})

t.test('macro decider: delete and apply', async (t) => {
  const macro = spec(t, macroDecider)
  const off: MacroEvent = { type: 'MacroUpdated', data: { is_active: false, by: 'admin', at } }
  macro.given([orgMacro]).when({ type: 'DeleteMacro', orgId: org, actor: admin, at }).then([off], 'an org macro is turned off, not removed')
  macro.given([orgMacro, off]).when({ type: 'DeleteMacro', orgId: org, actor: admin, at }).then([], 'turning off twice is a no-op')
  macro.given([orgMacro]).when({ type: 'DeleteMacro', orgId: org, actor: ann, at }).thenRejects(ForbiddenError)
  macro.given([annsMacro]).when({ type: 'DeleteMacro', orgId: org, actor: ann, at }).then([{ type: 'MacroDeleted', data: { by: 'ann', at } }])
  macro.given([annsMacro, { type: 'MacroDeleted', data: { by: 'ann', at } }]).when({ type: 'DeleteMacro', orgId: org, actor: ann, at }).then([], 'deleting twice is a no-op')
  macro.given([annsMacro, { type: 'MacroDeleted', data: { by: 'ann', at } }]).when({ type: 'ChangeMacro', orgId: org, changes: { title: 'X' }, actor: ann, at }).thenRejects(NotFoundError)

  macro.given([orgMacro]).when({ type: 'ApplyMacro', orgId: org, caseId: 'c1', actor: ann, at }).then([{ type: 'MacroApplied', data: { case_id: 'c1', by: 'ann', at } }], 'any member applies an org macro')
  macro.given([orgMacro, off]).when({ type: 'ApplyMacro', orgId: org, caseId: 'c1', actor: ann, at }).thenRejects(DomainError, { statusCode: 400 })
  macro.given([annsMacro]).when({ type: 'ApplyMacro', orgId: org, caseId: 'c1', actor: bob, at }).thenRejects(NotFoundError)
})

t.test('placeholders: the seven, substitution only, unknown tokens kept and reported', async (t) => {
  t.same(PLACEHOLDERS.map((p) => p.token), ['%customer_name%', '%customer_email%', '%case_id%', '%case_subject%', '%agent_name%', '%agent_email%', '%org_name%'])
  const values = { customer_name: 'Peter Gibbons', customer_email: 'peter@initech.test', case_id: 'c1', case_subject: 'Printer', agent_name: 'Ann', agent_email: 'ann@acme.test', org_name: '$& Acme %case_id%' }
  t.equal(renderMacro('Hi %customer_name%, about %case_subject% (%case_id%) %priority% - %agent_name%', values), 'Hi Peter Gibbons, about Printer (c1) %priority% - Ann')
  t.equal(renderMacro('%org_name%', values), '$& Acme %case_id%', 'a value is inserted as written: no replacement patterns, no second pass')
  t.equal(renderMacro('100% sure, 50%off', values), '100% sure, 50%off', 'a lone percent sign is text')
  t.equal(renderMacro('%customer_name%%case_id%', values), 'Peter Gibbonsc1', 'adjacent placeholders')
  t.same(unknownPlaceholders('%priority% %custmer_name% %priority% %case_id% %1x%'), ['%priority%', '%custmer_name%'], 'each unknown token once, in order; a token starts with a letter')
  t.equal(renderMacro('', values), '')
})
