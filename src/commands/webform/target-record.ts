import { relationErrors } from '../../projections/record/relations.ts'
import type { WebFormRow } from '../../projections/webform/webforms.ts'
import type { Caller } from '../caller.ts'
import { readModelsAt } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { createCase } from '../case/write-case.ts'
import { CONTACT_EMAIL_SCOPE } from '../contact/contact.ts'
import type { ContactFields } from '../contact/contact.ts'
import { createContact } from '../contact/create-contact.ts'
import { LEAD_EMAIL_SCOPE, createLead } from '../lead/create-lead.ts'
import { nameBasedId } from '../name-based-id.ts'
import { claimHolder } from '../unique-name.ts'
import type { DealDeps } from '../opportunity/create-opportunity.ts'
import { caseInputOf, contactInputOf, leadInputOf, mappedAnswers } from './answers.ts'
import type { Answers, Made } from './submission.ts'
import type { Target } from './webform.ts'

type Form = Pick<WebFormRow, 'fields' | 'assigned_to'> & { target: Target }

/** The form as this file reads it: the read model keeps the target as text, and only the decider's targets are ever written there. */
export const targeted = (row: WebFormRow): Form => ({ ...row, target: row.target as Target })

/**
 * The record a submission's answers make, through the same use case as the API creates it with
 * (createLead, createContact, createCase), in the submission's unit of work. Its ids derive from the
 * submission's, so a repeat (a retry, a second release, a crash between the appends) creates nothing new.
 */
export async function recordOf(deps: DealDeps, caller: Caller, session: CommandSession, form: Form, answers: Answers, submissionId: string): Promise<Made> {
  const input = mappedAnswers(form.fields, answers)
  // An assignee who has left the organization since the form was designed: the record goes unassigned (admins see it) rather than the visitor being refused.
  const assignees = (await relationErrors(deps.db, caller.orgId, 'profiles', form.assigned_to)) ? [] : form.assigned_to
  const idOf = (kind: string) => nameBasedId(`webform-${kind}:${submissionId}`)
  switch (form.target) {
    case 'lead': {
      const lead = leadInputOf(input, assignees)
      const holder = lead.email ? await claimHolder(deps.store, LEAD_EMAIL_SCOPE, caller.orgId, lead.email) : null
      if (holder !== null && holder !== idOf('lead')) return { lead_id: holder, outcome: 'matched' }
      const { id } = await createLead(deps, caller, lead, { session, id: idOf('lead') })
      return { lead_id: id, outcome: 'created' }
    }
    case 'contact': {
      const { contact_id, outcome } = await contactOf(deps, caller, session, contactInputOf(input, assignees), idOf('contact'))
      return { contact_id, outcome }
    }
    case 'case': {
      // The submitter, when the form asks their name: the contact with their email, else a new one (nobody's assignee).
      const submitter = input.mapped.first_name ? await contactOf(deps, caller, session, contactInputOf({ mapped: input.mapped, description: null }, []), idOf('contact')) : null
      // The case's contacts are checked against the read model: a contact created just now must be in it first.
      if (submitter?.outcome === 'created') await readModelsAt(deps, session.position())
      const { id } = await createCase(deps, caller, { ...caseInputOf(input, assignees), contacts: submitter ? [submitter.contact_id] : [] }, session, { id: idOf('case') })
      return { case_id: id, contact_id: submitter?.contact_id ?? null, outcome: 'created' }
    }
  }
}

/** The contact that already holds the email (no second contact, no error that would tell a stranger the address is known), else a new one. */
async function contactOf(deps: DealDeps, caller: Caller, session: CommandSession, contact: Partial<ContactFields>, newId: string): Promise<{ contact_id: string; outcome: Made['outcome'] }> {
  const holder = contact.email ? await claimHolder(deps.store, CONTACT_EMAIL_SCOPE, caller.orgId, contact.email) : null
  if (holder !== null && holder !== newId) return { contact_id: holder, outcome: 'matched' }
  const { id } = await createContact(deps, caller, contact, { session, id: newId })
  return { contact_id: id, outcome: 'created' }
}
