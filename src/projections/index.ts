import { accountsProjector } from './accounts.ts'
import { boardsProjector } from './boards.ts'
import { contactsProjector } from './contacts.ts'
import { customFieldsProjector } from './custom-fields.ts'
import { dashboardActivityProjector } from './dashboard-activity.ts'
import { goalsProjector } from './goals.ts'
import { leadsProjector } from './leads.ts'
import { notificationsProjector } from './notifications.ts'
import { opportunitiesProjector } from './opportunities.ts'
import { leadPipelinesProjector, pipelinesProjector, taskPipelinesProjector } from './pipelines.ts'
import type { Projector } from './projector.ts'
import { searchProjector } from './search.ts'
import { solutionsProjector } from './solutions.ts'
import { stageChangesProjector } from './stage-changes.ts'
import { tagsProjector } from './tags.ts'
import { tasksProjector } from './tasks.ts'
import { teamsProjector } from './teams.ts'
import { webhooksProjector } from './webhooks.ts'

/**
 * Every read model the service keeps, in one list: the runner applies them, the CLI rebuilds and
 * reports them, readiness checks them. Module issues add their projectors here.
 */
export const allProjectors: readonly Projector[] = [accountsProjector, boardsProjector, contactsProjector, customFieldsProjector, dashboardActivityProjector, goalsProjector, leadsProjector, leadPipelinesProjector, notificationsProjector, opportunitiesProjector, pipelinesProjector, searchProjector, solutionsProjector, stageChangesProjector, tagsProjector, taskPipelinesProjector, tasksProjector, teamsProjector, webhooksProjector]
