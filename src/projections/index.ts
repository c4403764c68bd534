import type { Projector } from './projector.ts'
import { tagsProjector } from './tags.ts'

/**
 * Every read model the service keeps, in one list: the runner applies them, the CLI rebuilds and
 * reports them, readiness checks them. Module issues add their projectors here.
 */
export const allProjectors: readonly Projector[] = [tagsProjector]
