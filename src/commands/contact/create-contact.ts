import type { Deps } from '../../deps.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { accountOf } from '../../projections/account/accounts.ts'
import { checkRelations } from '../../projections/record/relations.ts'
import type { Caller } from '../caller.ts'
import type { CommandSession } from '../command-session.ts'
import { createRecord } from '../record-create.ts'
import type { RecordCreation } from '../record-create.ts'
import { CONTACT_EMAIL_SCOPE, contactDecider, contactNames, contactStream, emptyContact } from './contact.ts'
import type { ContactFields } from './contact.ts'

/**
 * How a contact is created, whoever creates it: POST /api/contacts/, the CSV import (both through
 * the routes' contactModule, which adds the body schema) and a web form's submission come here, so
 * every contact obeys the same rules (relations checked, the email claimed once per organization).
 */
export function contactCreation(db: Deps['db']): RecordCreation<ContactFields, 'email', typeof contactNames> {
  return {
    empty: emptyContact,
    decider: contactDecider,
    commands: contactNames.commands,
    stream: contactStream,
    // Like tags and assignees, an account the contact already has may stay after it is deleted.
    checkRelations: async (orgId, requested, current) => {
      const accountMissing = requested.account && requested.account !== current?.account && !(await accountOf(db, orgId, requested.account))
      await checkRelations(db, orgId, requested, accountMissing ? { account: ['Expected an account of this organization.'] } : {}, current)
    },
    unique: { scope: CONTACT_EMAIL_SCOPE, field: 'email' },
  }
}

/** Creates a contact from validated fields; a given `id` makes it idempotent (the same id again records nothing). */
export function createContact(deps: Pick<Deps, 'db' | 'store' | 'clock'>, caller: Caller, fields: Partial<ContactFields>, options: { id?: string; session?: CommandSession } = {}): Promise<{ id: string; position: Position | null }> {
  return createRecord(deps, caller, contactCreation(deps.db), fields, options)
}
