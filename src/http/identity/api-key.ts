import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { credentialHistory, recordCredentialEvent } from '../../identity/audit.ts'
import { API_KEY_PREFIX, newSecret } from '../../identity/secrets.ts'
import type { Deps } from '../../deps.ts'
import { requireAdmin } from '../kernel/auth.ts'
import { AuditEntry, authErrors, iso } from '../kernel/schemas/common.ts'

const KeyInfo = z.object({ error: z.literal(false), has_key: z.boolean(), api_key_prefix: z.string().nullable(), created_at: z.string().nullable() })
const KeyDescription = KeyInfo.extend({ rotations: z.array(AuditEntry).describe('Every rotation of the key, from the audit stream') })

/**
 * The organization API key (§5): read-only, accepted only from the `Token` header. Only its hash
 * is stored, so GET describes the current key and POST rotates it, answering the new raw key once;
 * the old key stops working at once.
 */
export function apiKeyRoutes({ db, store, clock }: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    const config = { auth: 'interactive' as const }

    app.get('/api/org/api-key/', { config, schema: { tags: ['tokens'], summary: 'Describe the organization API key (admins); the raw key is only shown when rotated', response: { 200: KeyDescription, ...authErrors } } }, async (request) => {
      const identity = requireAdmin(request)
      const org = await db.selectFrom('organizations').select(['api_key_prefix', 'api_key_created_at']).where('id', '=', identity.orgId).executeTakeFirstOrThrow()
      const rotations = (await credentialHistory(store, identity.orgId)).get('api_key') ?? []
      return { error: false as const, has_key: org.api_key_prefix !== null, api_key_prefix: org.api_key_prefix, created_at: iso(org.api_key_created_at), rotations }
    })

    app.post(
      '/api/org/api-key/',
      { config, schema: { tags: ['tokens'], summary: 'Rotate the organization API key (admins); answers the new raw key in `api_key`', response: { 200: KeyInfo.extend({ message: z.string(), api_key: z.string() }), ...authErrors } } },
      async (request) => {
        const identity = requireAdmin(request)
        const secret = newSecret(API_KEY_PREFIX)
        const now = clock()
        await db.updateTable('organizations').set({ api_key_hash: secret.hash, api_key_prefix: secret.displayPrefix, api_key_created_at: now, updated_at: now }).where('id', '=', identity.orgId).execute()
        await recordCredentialEvent(store, identity.orgId, { type: 'OrganizationApiKeyRotated', data: { key_prefix: secret.displayPrefix, rotated_by: identity.profileId } }, { actorId: identity.profileId, requestId: request.id })
        return { error: false as const, message: 'API key rotated; the previous key no longer works', has_key: true, api_key_prefix: secret.displayPrefix, created_at: now.toISOString(), api_key: secret.raw }
      },
    )
  }
}
