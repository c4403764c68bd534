import { eventDefinition } from '../events/catalogue.ts'
import type { PersonalSpecs } from './sealing-store.ts'

const ownStream = (streamName: string) => streamName

/**
 * The catalogue's declarations (EventDeclaration `personal`, `subject`): the types with personal
 * fields, each sealed under its own stream's subject unless it names another. Apart from the
 * sealing store, which the use cases import, so that they do not import the module list.
 */
export const cataloguedPersonalSpecs: PersonalSpecs = (type) => {
  const definition = eventDefinition(type)
  return definition?.personal?.length ? { fields: definition.personal, subject: definition.subject ?? ownStream, elsewhere: definition.subject !== undefined } : undefined
}

