import { accountsProjector } from '../projections/account/accounts.ts'
import type { ModuleManifest } from './manifest.ts'

/** Accounts: customer organizations, their comments and attachments, and mail sent from them. */
export const accountModule: ModuleManifest = {
  name: 'account',
  routes: async (deps, files) => {
    const [{ accountNoteRoutes, accountRoutes }, { accountMailRoutes }] = await Promise.all([import('../http/accounts/accounts.ts'), import('../http/accounts/account-mail.ts')])
    return [accountRoutes(deps), accountNoteRoutes(deps, files), accountMailRoutes(deps)]
  },
  projectors: [accountsProjector],
  idKinds: [
    [/^\/api\/accounts\/comment\/\{id\}/, 'accountComment'],
    [/^\/api\/accounts\/attachment\/\{id\}/, 'accountAttachment'],
    [/^\/api\/accounts\/\{id\}/, 'account'],
  ],
}
