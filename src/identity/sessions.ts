import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Config } from '../config.ts'
import type { Db, Role } from '../db/database.ts'
import { ForbiddenError, UnauthorizedError } from '../errors.ts'
import type { AccessClaims } from './jwt.ts'
import { activeMembershipsOfUser, membershipOf } from './queries.ts'
import { REFRESH_TOKEN_PREFIX, hashSecret, newSecret } from './secrets.ts'
import { sessionDisplay, signInOrganizations, userDetail } from './session-claims.ts'
import { recordSignIn } from './users.ts'
import type { CurrentOrg, SessionSubject, SignInOrganization, UserDetail } from './session-claims.ts'

/** What every interactive sign-in answers: an access JWT and an opaque refresh token for one membership. */
export type TokenPair = {
  access_token: string
  refresh_token: string
  token_type: 'Bearer'
  expires_in: number
  org_id: string
  profile_id: string
  /** The original service's names for the same pair (its web app refreshes with these). */
  access: string
  refresh: string
  current_org: CurrentOrg
}

/**
 * What a sign-in answers beyond the pair: the user with their organizations and the profile acted
 * as; and the original's Google answer's names, which its phone app reads after every sign-in:
 * `JWTtoken` (the access token it stores), `user.profileImage` and a top-level `organizations`.
 */
export type SignIn = TokenPair & {
  JWTtoken: string
  user: UserDetail & { profileImage: string }
  organizations: SignInOrganization[]
  profile: { id: string; role: Role; is_organization_admin: boolean }
}

export type { SessionSubject } from './session-claims.ts'

export type SessionDeps = {
  db: Db
  clock: () => Date
  config: Pick<Config, 'accessTokenTtlSeconds' | 'refreshTokenTtlDays'>
  /** `app.jwt`: access tokens are signed with the app's key and lifetime. */
  jwt: { sign(claims: AccessClaims): string }
}

export class RefreshTokenReusedError extends UnauthorizedError {
  constructor(readonly familyId: string) {
    super('This refresh token was already used; every session of this sign-in has been revoked, sign in again')
  }
}

const INVALID_REFRESH = 'Invalid, expired or revoked refresh token'
const DAY_MS = 86_400_000

/** Emails are unique case-insensitively (see the users table's index). */
export function userByEmail(db: Db, email: string) {
  return db.selectFrom('users').select(['id', 'email']).where(sql<string>`lower(email)`, '=', email.trim().toLowerCase()).executeTakeFirst()
}

/**
 * The membership a sign-in lands in: `orgId` when the caller names one, else the user's oldest
 * active profile in an active organization; null when there is none.
 */
export async function activeSubject(db: Db, userId: string, orgId?: string): Promise<SessionSubject | null> {
  if (orgId) {
    const member = await membershipOf(db, userId, orgId)
    return member?.profile_active && member.org_active ? member : null
  }
  const first = await activeMembershipsOfUser(db, userId)
    .select(['p.user_id', 'p.org_id', 'p.id as profile_id'])
    .orderBy('p.created_at')
    .orderBy('p.id')
    .executeTakeFirst()
  return first ?? null
}

/** {@link activeSubject}, refused with 403 when there is none: the caller proved who they are but may not sign in there. */
export async function signInSubject(db: Db, userId: string, orgId?: string): Promise<SessionSubject> {
  const subject = await activeSubject(db, userId, orgId)
  if (subject) return subject
  throw new ForbiddenError(orgId ? 'You have no active profile in that organization' : 'Your account has no active profile in an active organization')
}

/**
 * Refresh tokens rotate: each use revokes the presented token and issues the next one in the same
 * family (one family per sign-in). A revoked token presented again means a copy is in someone
 * else's hands, so the whole family is revoked and both holders must sign in again.
 */
export function createSessions({ db, clock, config, jwt }: SessionDeps) {
  /** A new pair for `subject`; `db` may be a transaction so the pair commits with what granted it. */
  async function issue(trx: Db, subject: SessionSubject, familyId: string = randomUUID()): Promise<TokenPair> {
    const secret = newSecret(REFRESH_TOKEN_PREFIX)
    const expiresAt = new Date(clock().getTime() + config.refreshTokenTtlDays * DAY_MS)
    await trx.insertInto('refresh_tokens').values({ id: randomUUID(), profile_id: subject.profile_id, family_id: familyId, token_hash: secret.hash, expires_at: expiresAt, revoked_at: null }).execute()
    const { claims, currentOrg } = await sessionDisplay(trx, subject)
    const access = jwt.sign({ sub: subject.user_id, org_id: subject.org_id, typ: 'access', ...claims })
    return {
      access_token: access,
      refresh_token: secret.raw,
      token_type: 'Bearer',
      expires_in: config.accessTokenTtlSeconds,
      org_id: subject.org_id,
      profile_id: subject.profile_id,
      access,
      refresh: secret.raw,
      current_org: currentOrg,
    }
  }

  /** {@link issue} for an organization switch: also the user and the profile now acted as. */
  async function switchTo(trx: Db, subject: SessionSubject): Promise<SignIn> {
    const pair = await issue(trx, subject)
    const user = (await userDetail(trx, subject.user_id))!
    const role = user.organizations.find((org) => org.id === subject.org_id)?.role ?? 'USER'
    const organizations = await signInOrganizations(trx, subject.user_id)
    return { ...pair, JWTtoken: pair.access_token, user: { ...user, profileImage: user.profile_pic }, organizations, profile: { id: subject.profile_id, role, is_organization_admin: role === 'ADMIN' } }
  }

  async function rotate(raw: string): Promise<TokenPair> {
    const now = clock()
    const hash = hashSecret(raw)
    const outcome = await db.transaction().execute(async (trx) => {
      // The conditional update is the lock: of two concurrent uses of one token only one gets the row.
      const used = await trx.updateTable('refresh_tokens').set({ revoked_at: now }).where('token_hash', '=', hash).where('revoked_at', 'is', null).where('expires_at', '>', now).returning(['profile_id', 'family_id']).executeTakeFirst()
      if (!used) return { issued: null, reusedFamily: await revokeFamilyIfReused(trx, hash, now) }
      const profile = await trx.selectFrom('profiles').select(['user_id', 'org_id']).where('id', '=', used.profile_id).executeTakeFirstOrThrow()
      const member = await membershipOf(trx, profile.user_id, profile.org_id)
      // Throwing rolls the rotation back: the token works again if the profile is reactivated.
      if (!member?.profile_active || !member.org_active) throw new UnauthorizedError('User profile or organization is inactive')
      return { issued: await issue(trx, member, used.family_id), reusedFamily: null }
    })
    if (outcome.issued) return outcome.issued
    if (outcome.reusedFamily) throw new RefreshTokenReusedError(outcome.reusedFamily)
    throw new UnauthorizedError(INVALID_REFRESH)
  }

  async function revokeFamilyIfReused(trx: Db, hash: Buffer, now: Date): Promise<string | null> {
    const known = await trx.selectFrom('refresh_tokens').select(['family_id', 'revoked_at']).where('token_hash', '=', hash).executeTakeFirst()
    if (!known?.revoked_at) return null
    await revokeFamily(trx, known.family_id, now)
    return known.family_id
  }

  async function revokeFamily(trx: Db, familyId: string, now: Date): Promise<void> {
    await trx.updateTable('refresh_tokens').set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute()
  }

  /**
   * Ends the sign-in the token belongs to: its whole family, so no sibling survives. Holding the
   * token is the credential (a signed-out client's access token has often expired already); with
   * `userId`, only a token of that user is touched, so a caller cannot end someone else's sign-in
   * with a token they happened to see. Unknown tokens are ignored, which keeps it idempotent and
   * says nothing about tokens the caller does not hold.
   */
  async function logout(raw: string, userId?: string): Promise<void> {
    let query = db.selectFrom('refresh_tokens as r').innerJoin('profiles as p', 'p.id', 'r.profile_id').select('r.family_id').where('r.token_hash', '=', hashSecret(raw))
    if (userId) query = query.where('p.user_id', '=', userId)
    const token = await query.executeTakeFirst()
    if (token) await revokeFamily(db, token.family_id, clock())
  }

  /**
   * {@link switchTo} for a sign-in into the subject's organization (a link, a code, Google, a switch
   * of organization), which is what the membership's `last_login` records.
   */
  async function signIn(trx: Db, subject: SessionSubject): Promise<SignIn> {
    await recordSignIn(trx, subject.profile_id, clock())
    return switchTo(trx, subject)
  }

  return { issue, signIn, rotate, logout }
}

export type Sessions = ReturnType<typeof createSessions>
