import { z } from 'zod'
import type { CredentialAuditEvent } from '../identity/audit.ts'
import { By, Id, eventsOf, noPersonalData } from '../events/event-schemas.ts'
import type { ModuleManifest } from './manifest.ts'

/** Identity: sign-in (password, magic link, Google), sessions and tokens, the profile, users and organizations. Its tables are migrations, not read models. */
export const identityModule: ModuleManifest = {
  name: 'identity',
  events: noPersonalData(eventsOf<CredentialAuditEvent>()({
    // org_audit-<org id>
    PersonalAccessTokenCreated: { stream: 'org_audit', description: 'A personal access token was created (never its secret or hash).', data: z.strictObject({ token_id: Id, profile_id: Id, name: z.string(), token_prefix: z.string(), scopes: z.array(z.string()), expires_at: z.string().nullable() }) },
    PersonalAccessTokenFirstUsed: { stream: 'org_audit', description: 'A personal access token was used for the first time.', data: z.strictObject({ token_id: Id, profile_id: Id }) },
    PersonalAccessTokenRevoked: { stream: 'org_audit', description: 'A personal access token was revoked.', data: z.strictObject({ token_id: Id, profile_id: Id, revoked_by: By }) },
    OrganizationApiKeyRotated: { stream: 'org_audit', description: "The organization's API key was rotated.", data: z.strictObject({ key_prefix: z.string(), rotated_by: By }) },
  })),
  routes: async (deps) => {
    const [{ meRoutes }, { tokenRoutes }, { apiKeyRoutes }, { authRoutes }, { magicLinkRoutes }, { googleRoutes }, { usersRoutes }, { userRoutes }, { profileRoutes }, { organizationRoutes }] = await Promise.all([import('../http/identity/me.ts'), import('../http/identity/tokens.ts'), import('../http/identity/api-key.ts'), import('../http/identity/auth.ts'), import('../http/identity/magic-link.ts'), import('../http/identity/google.ts'), import('../http/identity/users.ts'), import('../http/identity/user.ts'), import('../http/identity/profile.ts'), import('../http/identity/organizations.ts')])
    return [meRoutes(deps), tokenRoutes(deps), apiKeyRoutes(deps), authRoutes(deps), magicLinkRoutes(deps), googleRoutes(deps), usersRoutes(deps), userRoutes(deps), profileRoutes(deps), organizationRoutes(deps)]
  },
  idKinds: [
    [/^\/api\/user\/\{id\}\/status\/$/, 'user'],
    [/^\/api\/user\/\{id\}/, 'profile'],
    [/^\/api\/org\/\{id\}/, 'org'],
    [/^\/api\/(profile|org)\/tokens\/\{id\}/, 'token'],
  ],
}
