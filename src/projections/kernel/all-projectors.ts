import { accountsProjector } from '../account/accounts.ts'
import { boardsProjector } from '../board/boards.ts'
import { contactsProjector } from '../contact/contacts.ts'
import { customFieldsProjector } from '../custom-field/custom-fields.ts'
import { dashboardActivityProjector } from '../activity/dashboard-activity.ts'
import { goalsProjector } from '../goal/goals.ts'
import { leadsProjector } from '../lead/leads.ts'
import { notificationsProjector } from '../notification/notifications.ts'
import { opportunitiesProjector } from '../opportunity/opportunities.ts'
import { leadPipelinesProjector, pipelinesProjector, taskPipelinesProjector } from '../pipeline/pipelines.ts'
import type { Projector } from './projector.ts'
import { searchProjector } from '../search/search.ts'
import { solutionsProjector } from '../solution/solutions.ts'
import { stageChangesProjector } from '../opportunity/stage-changes.ts'
import { tasksProjector } from '../task/tasks.ts'
import { teamsProjector } from '../team/teams.ts'
import { webhooksProjector } from '../webhook/webhooks.ts'
import { MODULES } from '../../modules/modules.ts'

/**
 * Every read model the service keeps, in one list: the runner applies them, the CLI rebuilds and
 * reports them, readiness checks them. Module issues add their projectors here.
 */
export const allProjectors: readonly Projector[] = [accountsProjector, boardsProjector, contactsProjector, customFieldsProjector, dashboardActivityProjector, goalsProjector, leadsProjector, leadPipelinesProjector, notificationsProjector, opportunitiesProjector, pipelinesProjector, searchProjector, solutionsProjector, stageChangesProjector, taskPipelinesProjector, tasksProjector, teamsProjector, webhooksProjector, ...MODULES.flatMap((module) => module.projectors ?? [])]
