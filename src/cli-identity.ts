import { sql } from 'kysely'
import { z } from 'zod'
import type { Config } from './config.ts'
import { ConfigError } from './config.ts'
import { createAccessTokenSigner } from './identity/jwt.ts'
import { bootstrapOrganization } from './identity/memberships.ts'
import { membershipByEmail } from './identity/queries.ts'
import type { Runtime } from './runtime.ts'

export type CliOptions = { org?: string; email?: string }

const Email = z.email()
const Uuid = z.uuid()

function required(value: string | undefined, flag: string, schema: z.ZodType<string>): string {
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new ConfigError(`Expected --${flag} ${value === undefined ? 'to be given' : `to be valid, got "${value}"`}`)
  return parsed.data
}

/** `bootstrap --org <name> --email <email>`: a new organization, its first admin, and a token for them. */
export async function bootstrap(runtime: Runtime, config: Config, options: CliOptions) {
  const name = required(options.org, 'org', z.string().trim().min(1))
  const email = required(options.email, 'email', Email)
  const created = await bootstrapOrganization(runtime.db, { name, email })
  const sign = await createAccessTokenSigner(config)
  return { ...created, access_token: sign({ sub: created.user_id, org_id: created.org_id }) }
}

/** `login --email <email> --org <org id>`: a token for an existing, active profile. */
export async function login(runtime: Runtime, config: Config, options: CliOptions) {
  const email = required(options.email, 'email', Email)
  const orgId = required(options.org, 'org', Uuid)
  const member = await membershipByEmail(runtime.db, email, orgId)
  if (!member) throw new ConfigError(`No profile for ${email} in organization ${orgId}`)
  if (!member.profile_active || !member.org_active) throw new ConfigError(`The profile of ${email} or organization ${orgId} is inactive`)
  const sign = await createAccessTokenSigner(config)
  return { profile_id: member.profile_id, access_token: sign({ sub: member.user_id, org_id: member.org_id }) }
}

/** `superuser --email <email>`: the platform-level flag, which only the operator can grant. */
export async function grantSuperuser(runtime: Runtime, options: CliOptions) {
  const email = required(options.email, 'email', Email)
  const updated = await runtime.db.updateTable('users').set({ is_superuser: true }).where(sql<string>`lower(email)`, '=', email.toLowerCase()).returning('id').executeTakeFirst()
  if (!updated) throw new ConfigError(`No user with email ${email}`)
  return { user_id: updated.id, is_superuser: true }
}
