import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { ValidationError } from '../../errors.ts'
import { credentialHistory, recordCredentialEvent } from '../../identity/audit.ts'
import { createToken, revokeToken, tokensOfOrganization, tokensOfProfile } from '../../identity/personal-access-tokens.ts'
import type { TokenRow } from '../../identity/personal-access-tokens.ts'
import { displayName } from '../../identity/users.ts'
import { MAX_SCOPES, normalizeScopes } from '../../identity/scopes.ts'
import type { Deps } from '../../deps.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { AuditEntry, IdParams, Message, authErrors, iso } from '../kernel/schemas/common.ts'
import { formList } from '../kernel/schemas/form-values.ts'

const Token = z.object({
  id: z.uuid(),
  name: z.string(),
  token_prefix: z.string(),
  scopes: z.array(z.string()),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  is_live: z.boolean(),
})

const OrgToken = Token.extend({
  owner: z.object({ id: z.uuid().describe('Profile id'), name: z.string().describe("The owner's name, or their email when they have none"), email: z.string(), role: z.enum(['ADMIN', 'USER']), is_active: z.boolean() }),
  history: z.array(AuditEntry).describe('Lifecycle events of the token from the audit stream: created, first used, revoked'),
})

const CreateToken = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(100),
  scopes: formList(z.array(z.string()).max(MAX_SCOPES, `At most ${MAX_SCOPES} scopes.`)).default([]),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
})

const UNUSED_DAYS = 90

function tokenBody(row: TokenRow, now: Date, ownerActive = true) {
  const live = !row.revoked_at && (!row.expires_at || row.expires_at > now) && ownerActive
  return { ...row, created_at: row.created_at.toISOString(), expires_at: iso(row.expires_at), last_used_at: iso(row.last_used_at), revoked_at: iso(row.revoked_at), is_live: live }
}

/** Personal access tokens (§5 rules 5-8) — credential management needs an interactive sign-in. */
export function tokenRoutes({ db, store, clock }: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    const interactive = { auth: 'interactive' as const }

    app.get('/api/profile/tokens/', { config: interactive, schema: { tags: ['tokens'], summary: "The caller's personal access tokens (never the raw value or hash)", response: { 200: z.object({ error: z.literal(false), tokens: z.array(Token) }), ...authErrors } } }, async (request) => {
      const identity = identityOf(request)
      const now = clock()
      return { error: false as const, tokens: (await tokensOfProfile(db, identity.profileId!)).map((row) => tokenBody(row, now)) }
    })

    app.post(
      '/api/profile/tokens/',
      { config: interactive, schema: { tags: ['tokens'], summary: 'Create a personal access token; the raw `token` is shown only in this answer', body: CreateToken, response: { 201: Token.extend({ error: z.literal(false), token: z.string() }), ...authErrors } } },
      async (request, reply) => {
        const identity = identityOf(request)
        const now = clock()
        const { scopes, invalid } = normalizeScopes(request.body.scopes)
        if (invalid.length) throw new ValidationError({ scopes: invalid.map((s) => `Unknown scope "${s}"; expected <resource>:<read|write>`) })
        const expiresAt = request.body.expires_at ? new Date(request.body.expires_at) : null
        if (expiresAt && expiresAt <= now) throw new ValidationError({ expires_at: ['Must be in the future.'] })
        const { row, raw } = await createToken(db, { profileId: identity.profileId!, orgId: identity.orgId, name: request.body.name, scopes, expiresAt })
        await recordCredentialEvent(
          store,
          identity.orgId,
          { type: 'PersonalAccessTokenCreated', data: { token_id: row.id, profile_id: identity.profileId!, name: row.name, token_prefix: row.token_prefix, scopes, expires_at: iso(expiresAt) } },
          { actorId: identity.profileId, requestId: request.id },
        )
        return reply.code(201).send({ error: false as const, ...tokenBody(row, now), token: raw })
      },
    )

    app.delete('/api/profile/tokens/:id/', { config: interactive, schema: { tags: ['tokens'], summary: "Revoke one of the caller's tokens (idempotent)", params: IdParams, response: { 200: Message, ...authErrors } } }, async (request) => {
      const identity = identityOf(request)
      await revokeAndAudit(request.params.id, { orgId: identity.orgId, profileId: identity.profileId! }, identity.profileId, request.id)
      return { error: false as const, message: 'Token revoked' }
    })

    app.get(
      '/api/org/tokens/',
      {
        config: interactive,
        schema: {
          tags: ['tokens'],
          summary: "Every token of the organization, with owner and totals (admins)",
          response: { 200: z.object({ error: z.literal(false), tokens: z.array(OrgToken), totals: z.object({ count: z.number(), live: z.number(), orphaned: z.number(), unused_90d: z.number() }) }), ...authErrors },
        },
      },
      async (request) => {
        const identity = requireAdmin(request)
        const now = clock()
        const unusedSince = new Date(now.getTime() - UNUSED_DAYS * 86_400_000)
        const history = await credentialHistory(store, identity.orgId)
        const tokens = (await tokensOfOrganization(db, identity.orgId)).map(({ owner_id, owner_email, owner_first_name, owner_last_name, owner_role, owner_active, ...row }) => ({
          ...tokenBody(row, now, owner_active),
          owner: { id: owner_id, name: displayName({ first_name: owner_first_name, last_name: owner_last_name, email: owner_email }), email: owner_email, role: owner_role, is_active: owner_active },
          history: history.get(row.id) ?? [],
          lastActivity: row.last_used_at ?? row.created_at,
        }))
        const totals = {
          count: tokens.length,
          live: tokens.filter((t) => t.is_live).length,
          orphaned: tokens.filter((t) => !t.revoked_at && !t.owner.is_active).length,
          unused_90d: tokens.filter((t) => t.is_live && t.lastActivity < unusedSince).length,
        }
        return { error: false as const, tokens: tokens.map(({ lastActivity: _unused, ...t }) => t), totals }
      },
    )

    app.delete('/api/org/tokens/:id/', { config: interactive, schema: { tags: ['tokens'], summary: 'Revoke any token of the organization (admins, idempotent)', params: IdParams, response: { 200: Message, ...authErrors } } }, async (request) => {
      const identity = requireAdmin(request)
      await revokeAndAudit(request.params.id, { orgId: identity.orgId }, identity.profileId, request.id)
      return { error: false as const, message: 'Token revoked' }
    })

    async function revokeAndAudit(tokenId: string, scope: { orgId: string; profileId?: string }, actorId: string | null, requestId: string): Promise<void> {
      const { revokedNow, ownerId } = await revokeToken(db, tokenId, scope, clock())
      if (revokedNow) {
        await recordCredentialEvent(store, scope.orgId, { type: 'PersonalAccessTokenRevoked', data: { token_id: tokenId, profile_id: ownerId, revoked_by: actorId } }, { actorId, requestId })
      }
    }
  }
}
