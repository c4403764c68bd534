import type { Projector } from '../projections/kernel/projector.ts'
import { recordKindsOf } from '../projections/record/record-kinds.ts'
import type { RecordKinds } from '../projections/record/record-kinds.ts'
import { accountModule } from './account.ts'
import { activityModule } from './activity.ts'
import { apiSettingModule } from './api-setting.ts'
import { boardModule } from './board.ts'
import { businessHoursModule } from './business-hours.ts'
import { caseModule } from './case.ts'
import { caseAnalyticsModule } from './case-analytics.ts'
import { caseCsatModule } from './case-csat.ts'
import { caseMailModule } from './case-mail.ts'
import { caseApprovalModule } from './case-approval.ts'
import { caseRoutingModule } from './case-routing.ts'
import { caseEscalationModule } from './case-escalation.ts'
import { contactModule } from './contact.ts'
import { customFieldModule } from './custom-field.ts'
import { dashboardModule } from './dashboard.ts'
import { documentModule } from './document.ts'
import { goalModule } from './goal.ts'
import { identityModule } from './identity.ts'
import { invoiceModule } from './invoice.ts'
import { leadModule } from './lead.ts'
import { macroModule } from './macro.ts'
import type { ModuleManifest, ModuleOverModules } from './manifest.ts'
import { notificationModule } from './notification.ts'
import { opportunityModule } from './opportunity.ts'
import { packModule } from './pack.ts'
import { pipelineModule } from './pipeline.ts'
import { portalModule } from './portal.ts'
import { privacyModule } from './privacy.ts'
import { searchModule } from './search.ts'
import { solutionModule } from './solution.ts'
import { tagModule } from './tag.ts'
import { timeEntryModule } from './time-entry.ts'
import { taskModule } from './task.ts'
import { teamModule } from './team.ts'
import { webFormModule } from './webform.ts'
import { webhookModule } from './webhook.ts'

/**
 * Every module of the service, in the order their routes are registered. Adding a module adds its
 * manifest here (src/modules/<module>.ts) and edits no other shared file: the app, the projection
 * runner, the server's processes and the isolation matrix read this list, and the modules over
 * modules (search, …) the manifests in it.
 */
const LISTED: readonly (ModuleManifest | ModuleOverModules)[] = [
  identityModule,
  tagModule,
  accountModule,
  contactModule,
  teamModule,
  customFieldModule,
  pipelineModule,
  goalModule,
  opportunityModule,
  leadModule,
  webhookModule,
  webFormModule,
  solutionModule,
  businessHoursModule,
  caseModule,
  caseAnalyticsModule,
  caseCsatModule,
  caseMailModule,
  caseApprovalModule,
  caseRoutingModule,
  caseEscalationModule,
  macroModule,
  timeEntryModule,
  portalModule,
  taskModule,
  documentModule,
  apiSettingModule,
  packModule,
  invoiceModule,
  dashboardModule,
  activityModule,
  notificationModule,
  boardModule,
  searchModule,
  privacyModule,
]

const declared = LISTED.filter((module): module is ModuleManifest => typeof module !== 'function')
export const MODULES: readonly ModuleManifest[] = LISTED.map((module) => (typeof module === 'function' ? module(declared) : module))

/** The kinds of record the manifests declare for the activity feed and notifications: the app's live notification stream reads them. */
export const RECORD_KINDS: RecordKinds = recordKindsOf(declared.map((module) => module.record))

/** Every read model the service keeps: the runner applies them, the CLI rebuilds and reports them, readiness checks them. */
export const allProjectors: readonly Projector[] = MODULES.flatMap((module) => module.projectors ?? [])
