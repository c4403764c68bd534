import { CONTACT_EMAIL_SCOPE } from '../contact/contact.ts'
import { LEAD_EMAIL_SCOPE } from '../lead/create-lead.ts'

/**
 * The unique-name scopes whose names are a person's: a contact's or a lead's email
 * (commands/name-claim.ts). The claim is the person's data, sealed under their key, and an
 * erasure releases it, so the address may be used again.
 */
export const PERSON_CLAIMS: Readonly<Record<string, { scope: string; field: string }>> = {
  contact: { scope: CONTACT_EMAIL_SCOPE, field: 'email' },
  lead: { scope: LEAD_EMAIL_SCOPE, field: 'email' },
}

/** The person a name claim's event is about (EventDeclaration `subject`), from its stream `name_claim-<scope>-…`; none for other scopes. */
export function claimSubject(streamName: string, data: Record<string, unknown>): string | undefined {
  const kind = Object.keys(PERSON_CLAIMS).find((candidate) => streamName.startsWith(`name_claim-${PERSON_CLAIMS[candidate]!.scope}-`))
  return kind && typeof data.owner_id === 'string' ? `${kind}-${data.owner_id}` : undefined
}
