import { accountStreams } from '../../commands/account/account.ts'
import { contactStreams } from '../../commands/contact/contact.ts'
import { leadStreams } from '../../commands/lead/lead.ts'
import { opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import { solutionStreams } from '../../commands/solution/solution.ts'
import { taskStreams } from '../../commands/task/task.ts'
import type { StreamCategory } from '../../commands/streams.ts'
import type { VisibleKind } from '../../visibility/policy.ts'

/**
 * What global search knows of each kind of record: which events keep its document, which fields
 * it reads from them, and how those fields become the document (what the palette shows and what
 * is matched). The answer's `type` is the kind, as the original's search answers it (it has no
 * tasks; cases, its tickets, are not built here yet).
 */
export const SEARCH_KINDS = ['lead', 'deal', 'account', 'contact', 'solution', 'task'] as const
export type SearchKind = (typeof SEARCH_KINDS)[number]

export type Fields = Record<string, unknown>

/** A document's derived text: shown (title, subtitle) and matched (names: weight A and trigrams; terms: weight B). */
export type DocumentText = { title: string; subtitle: string; names: string; terms: string }

export type KindSpec = {
  kind: SearchKind
  streams: StreamCategory
  events: { created: string; updated: string; deleted: string }
  /** The fields the document is derived from (a change to any other field changes nothing here). */
  keys: readonly string[]
  /** Who may see a document: its record kind's rule in the visibility policy, as in its list. */
  visibility: VisibleKind
  document(fields: Fields): DocumentText
}

const str = (value: unknown): string => (typeof value === 'string' ? value.trim() : '')
const words = (...values: unknown[]): string => values.map(str).filter(Boolean).join(' ')
const firstOf = (...values: unknown[]): string => values.map(str).find(Boolean) ?? ''
/** An email as itself and as its parts, so `acme` finds `jo@acme.com` (the parser keeps an email as one word). */
const email = (value: unknown): string => words(value, str(value).replace(/[@.+_-]/g, ' '))

const lead: KindSpec = {
  kind: 'lead',
  streams: leadStreams,
  events: { created: 'LeadCreated', updated: 'LeadUpdated', deleted: 'LeadDeleted' },
  keys: ['title', 'first_name', 'last_name', 'email', 'company_name', 'assigned_to'],
  visibility: 'Lead',
  document: (f) => ({
    title: firstOf(f.title, words(f.first_name, f.last_name), f.email) || 'Untitled lead',
    subtitle: firstOf(f.company_name, f.email),
    names: words(f.first_name, f.last_name, f.title),
    terms: words(email(f.email), f.company_name),
  }),
}

const deal: KindSpec = {
  kind: 'deal',
  streams: opportunityStreams,
  events: { created: 'OpportunityCreated', updated: 'OpportunityUpdated', deleted: 'OpportunityDeleted' },
  keys: ['name', 'description', 'account', 'stage', 'assigned_to'],
  visibility: 'Opportunity',
  // The subtitle is the stage; the answer shows the account's name instead when the deal has one (search-queries.ts).
  document: (f) => ({ title: str(f.name), subtitle: str(f.stage), names: str(f.name), terms: str(f.description) }),
}

const account: KindSpec = {
  kind: 'account',
  streams: accountStreams,
  events: { created: 'AccountCreated', updated: 'AccountUpdated', deleted: 'AccountDeleted' },
  keys: ['name', 'email', 'website', 'industry'],
  visibility: 'Account',
  document: (f) => ({ title: str(f.name), subtitle: firstOf(f.email, f.industry), names: str(f.name), terms: words(email(f.email), f.website, f.industry) }),
}

const contact: KindSpec = {
  kind: 'contact',
  streams: contactStreams,
  events: { created: 'ContactCreated', updated: 'ContactUpdated', deleted: 'ContactDeleted' },
  keys: ['first_name', 'last_name', 'email', 'organization'],
  visibility: 'Contact',
  document: (f) => ({
    title: firstOf(words(f.first_name, f.last_name), f.email) || 'Unnamed contact',
    subtitle: firstOf(f.organization, f.email),
    names: words(f.first_name, f.last_name),
    terms: words(email(f.email), f.organization),
  }),
}

const solution: KindSpec = {
  kind: 'solution',
  streams: solutionStreams,
  events: { created: 'SolutionCreated', updated: 'SolutionUpdated', deleted: 'SolutionDeleted' },
  keys: ['title', 'description', 'status'],
  visibility: 'Solution',
  document: (f) => ({ title: str(f.title), subtitle: str(f.status), names: str(f.title), terms: str(f.description) }),
}

const task: KindSpec = {
  kind: 'task',
  streams: taskStreams,
  events: { created: 'TaskCreated', updated: 'TaskUpdated', deleted: 'TaskDeleted' },
  keys: ['title', 'description', 'status', 'due_date', 'assigned_to'],
  visibility: 'Task',
  document: (f) => ({ title: str(f.title), subtitle: [str(f.status), str(f.due_date) && `due ${str(f.due_date)}`].filter(Boolean).join(' · '), names: str(f.title), terms: str(f.description) }),
}

export const KIND_SPECS: readonly KindSpec[] = [lead, deal, account, contact, solution, task]

/** Only the fields a kind reads, from an event's data. */
export const pick = (spec: KindSpec, data: Fields): Fields => Object.fromEntries(spec.keys.filter((key) => key in data).map((key) => [key, data[key]]))
