import { z } from 'zod'
import type { CsatEvent } from '../commands/case/csat.ts'
import { Id, at, eventsOf } from '../events/event-schemas.ts'
import { mailTransportFor } from '../identity/mail.ts'
import { createCsatSender } from '../processes/csat-sender.ts'
import { caseCsatProjector } from '../projections/case/csat.ts'
import type { ModuleManifest } from './manifest.ts'

/** The surveyed contact's answer is theirs: sealed under the contact's key, erased with them (docs/personal-data.md). */
const ofTheContact = (_stream: string, data: Record<string, unknown>) => (typeof data.contact_id === 'string' ? `contact-${data.contact_id}` : undefined)

/** Satisfaction surveys (csat-<case id>): one per closed case, mailed by a scheduled sender, answered through a public signed link. */
export const caseCsatModule: ModuleManifest = {
  name: 'case-csat',
  events: eventsOf<CsatEvent>()({
    CsatSurveySent: { stream: 'csat', description: "A closed case's satisfaction survey was recorded and its link mailed to the case's contact (one per case); the link expires at `expires_at`.", data: z.strictObject({ case_id: Id, org_id: Id, contact_id: Id, expires_at: z.iso.datetime({ offset: true }), ...at }), personal: [] },
    CsatSurveyAnswered: { stream: 'csat', description: 'The contact answered the survey through its link: a rating of 1 to 5 and a comment (the answer may be changed for a day after the first).', data: z.strictObject({ contact_id: Id, rating: z.number().int().min(1).max(5), comment: z.string(), ...at }), personal: ['comment'], subject: ofTheContact },
  }),
  routes: async (deps) => {
    const { caseCsatRoutes } = await import('../http/cases/csat.ts')
    return [caseCsatRoutes(deps)]
  },
  projectors: [caseCsatProjector],
  // Surveys check once a minute, as the due notifier (DUE_NOTIFY_INTERVAL_MS); the mail goes out as sign-in mail does.
  processes: [({ config, logger, ...deps }) => createCsatSender({ ...deps, config, logger, mail: mailTransportFor(config, logger), intervalMs: config.dueNotifyIntervalMs })],
}
