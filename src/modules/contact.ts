import { contactsProjector } from '../projections/contact/contacts.ts'
import type { ModuleManifest } from './manifest.ts'

/** Contacts: people, their comments and attachments. */
export const contactModule: ModuleManifest = {
  name: 'contact',
  routes: async (deps, files) => {
    const { contactNoteRoutes, contactRoutes } = await import('../http/contacts/contacts.ts')
    return [contactRoutes(deps), contactNoteRoutes(deps, files)]
  },
  projectors: [contactsProjector],
  idKinds: [
    [/^\/api\/contacts\/comment\/\{id\}/, 'contactComment'],
    [/^\/api\/contacts\/attachment\/\{id\}/, 'contactAttachment'],
    [/^\/api\/contacts\/\{id\}/, 'contact'],
  ],
}
