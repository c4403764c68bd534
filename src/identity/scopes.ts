/**
 * PAT scopes are `<resource>:<action>`: the resource is the first path segment after /api/, the
 * action `read` (GET, HEAD) or `write` (anything else); `*` stands for every resource. Write does
 * not imply read. An empty list is unrestricted; a scoped token is denied paths of no known resource.
 */
export const SCOPE_ACTIONS = ['read', 'write'] as const

export const SCOPE_RESOURCES = [
  'accounts', 'activities', 'api-settings', 'attachments', 'auth', 'boards', 'business-hours', 'cases', 'contacts',
  'custom-fields', 'dashboard', 'documents', 'events', 'invoices', 'leads', 'macros', 'notifications', 'opportunities',
  'org', 'packs', 'portal', 'privacy', 'profile', 'projections', 'public', 'search', 'stream', 'tags', 'tasks', 'teams',
  'time-entries', 'users', 'webforms', 'webhooks',
] as const

export const MAX_SCOPES = 50

// `/api/user/{id}/` manages the same records as `/api/users/`.
const ALIASES: Record<string, string> = { user: 'users' }

export function resourceOf(path: string): string | undefined {
  const segment = /^\/api\/([^/?]+)/.exec(path)?.[1]
  const resource = segment && (ALIASES[segment] ?? segment)
  return resource && (SCOPE_RESOURCES as readonly string[]).includes(resource) ? resource : undefined
}

export const actionOf = (method: string) => (method === 'GET' || method === 'HEAD' ? 'read' : 'write')

export function scopesAllow(scopes: readonly string[], path: string, method: string): boolean {
  if (scopes.length === 0) return true
  const resource = resourceOf(path)
  if (!resource) return false
  const action = actionOf(method)
  return scopes.includes(`${resource}:${action}`) || scopes.includes(`*:${action}`)
}

/** Lower-cases and de-duplicates; returns the scopes that name an unknown resource or action. */
export function normalizeScopes(input: readonly string[]): { scopes: string[]; invalid: string[] } {
  const scopes = [...new Set(input.map((s) => s.trim().toLowerCase()))]
  const invalid = scopes.filter((scope) => {
    const [resource, action, extra] = scope.split(':')
    return extra !== undefined || !(SCOPE_ACTIONS as readonly string[]).includes(action ?? '') || !(resource === '*' || (SCOPE_RESOURCES as readonly string[]).includes(resource ?? ''))
  })
  return { scopes, invalid }
}
