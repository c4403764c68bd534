import type { ModuleManifest } from './manifest.ts'

/**
 * The customer portal (docs/portal.md): contacts sign in by mail and read their own cases and the
 * published knowledge base, open cases and reply. No events or read models of its own: a portal
 * case and comment are the cases module's events (with the contact in their metadata), and who
 * sees what is the visibility policy's `contact` caller. Its `{id}` routes take only a portal
 * token, so it declares no id kinds for the staff isolation matrix, which proves them apart.
 */
export const portalModule: ModuleManifest = {
  name: 'portal',
  routes: async (deps) => {
    const { portalSignInRoutes } = await import('../http/portal/portal-sign-in.ts')
    const { portalCaseRoutes } = await import('../http/portal/portal-cases.ts')
    const { portalArticleRoutes } = await import('../http/portal/portal-articles.ts')
    return [portalSignInRoutes(deps), portalCaseRoutes(deps), portalArticleRoutes(deps)]
  },
}
