import { z } from 'zod'
import { LEAD_PERSONAL_FIELDS, leadStreams } from '../commands/lead/lead.ts'
import { LEAD_RATINGS, LEAD_SOURCES as LEAD_LEAD_SOURCES, LEAD_STATUSES } from '../commands/lead/lead.ts'
import type { LeadEvent } from '../commands/lead/lead.ts'
import { By, CustomValues, Day, Decimal, Id, Ids, Placement, at, changedPaths, changesOf, eventsOf, noteDefinitions, texts } from '../events/event-schemas.ts'
import { leadsProjector } from '../projections/lead/leads.ts'
import { email, firstOf, words } from '../projections/search/search-documents.ts'
import { created, deleted, noteReadings, personErased, personName, updatedChanges } from '../projections/record/record-kinds.ts'
import type { ModuleManifest } from './manifest.ts'

// Leads (lead-<id>).
const leadShape = {
  first_name: z.string(),
  ...texts('salutation', 'last_name', 'title', 'email', 'phone', 'company_name', 'industry', 'website', 'linkedin_url', 'address_line', 'city', 'state', 'postcode', 'country', 'description'),
  status: z.enum(LEAD_STATUSES),
  source: z.enum(LEAD_LEAD_SOURCES).nullable(),
  rating: z.enum(LEAD_RATINGS).nullable(),
  opportunity_amount: Decimal.nullable(),
  currency: z.string().nullable(),
  probability: z.number().min(0).max(100).nullable(),
  close_date: Day.nullable(),
  last_contacted: Day.nullable(),
  next_follow_up: Day.nullable(),
  account: Id.nullable(),
  contacts: Ids,
  tags: Ids,
  teams: Ids,
  assigned_to: Ids,
  custom_fields: CustomValues,
}

const PERSONAL = LEAD_PERSONAL_FIELDS

/** Leads: prospects, their board, comments and attachments, CSV upload and web capture. */
export const leadModule: ModuleManifest = {
  name: 'lead',
  events: eventsOf<LeadEvent>()({
    // lead-<id>
    LeadCreated: { stream: 'lead', description: 'A lead (prospective customer) was created.', data: z.strictObject({ lead_id: Id, org_id: Id, ...leadShape, created_by: By, ...at }), personal: PERSONAL },
    LeadUpdated: { stream: 'lead', description: 'Fields of a lead changed: only those, each with its value before and after.', data: z.strictObject({ changes: changesOf(leadShape), ...at }), personal: changedPaths(...PERSONAL) },
    LeadConverted: { stream: 'lead', description: 'A lead was converted into the account, contact and deal named (status `converted`).', data: z.strictObject({ account_id: Id, contact_id: Id, opportunity_id: Id, by: By, ...at }), personal: [] },
    LeadDeleted: { stream: 'lead', description: 'A lead was (soft) deleted.', data: z.strictObject(at), personal: [] },
    LeadMoved: { stream: 'lead', description: 'A lead card was placed or moved on the lead board: a stage of a lead pipeline (`from` null on its first placement) and its order in the column.', data: z.strictObject({ from: Placement.nullable(), to: Placement, kanban_order: z.number(), by: By, ...at }), personal: [] },
    ...noteDefinitions('Lead', 'lead', 'lead', { ofAPerson: true }),
  }),
  routes: async (deps, files) => {
    const [{ leadRoutes }, { leadUploadRoutes }, { leadCaptureRoutes }, { leadBoardRoutes }] = await Promise.all([import('../http/leads/leads.ts'), import('../http/leads/lead-upload.ts'), import('../http/leads/lead-capture.ts'), import('../http/leads/lead-board.ts')])
    return [leadRoutes(deps, files), leadUploadRoutes(deps), leadCaptureRoutes(deps), leadBoardRoutes(deps)]
  },
  projectors: [leadsProjector],
  subjects: ['lead'],
  search: {
    kind: 'lead',
    order: 1,
    version: 0,
    streams: leadStreams,
    events: { created: 'LeadCreated', updated: 'LeadUpdated', deleted: 'LeadDeleted' },
    changes: 'fromTo',
    keys: ['title', 'first_name', 'last_name', 'email', 'company_name', 'assigned_to'],
    visibility: 'Lead',
    document: (f) => ({
      title: firstOf(f.title, words(f.first_name, f.last_name), f.email) || 'Untitled lead',
      subtitle: firstOf(f.company_name, f.email),
      names: words(f.first_name, f.last_name, f.title),
      terms: words(email(f.email), f.company_name),
    }),
  },
  record: {
    entityType: 'Lead',
    version: 0,
    table: 'leads',
    name: personName,
    erased: personErased,
    page: '/leads',
    noun: 'lead',
    activity: {
      LeadCreated: created,
      LeadUpdated: updatedChanges,
      LeadConverted: { action: 'UPDATE', describe: () => 'Converted the lead into an account, a contact and a deal' },
      LeadDeleted: deleted,
      LeadMoved: { action: 'UPDATE', describe: () => 'Moved the lead on its board' },
      ...noteReadings('Lead'),
    },
    notifiedBy: { created: 'LeadCreated', updated: 'LeadUpdated', commented: 'LeadCommentAdded' },
  },
  idKinds: [
    [/^\/api\/leads\/comment\/\{id\}/, 'leadComment'],
    [/^\/api\/leads\/attachment\/\{id\}/, 'leadAttachment'],
    [/^\/api\/leads\/\{id\}/, 'lead'],
  ],
}
