import { z } from 'zod'
import { isCurrency, isTimezone } from '../../identity/organizations.ts'
import type { OrganizationRow } from '../../identity/organizations.ts'
import type { MemberRow } from '../../identity/users.ts'

/** Shapes shared by the user, profile and organization routes. */

export const RoleEnum = z.enum(['ADMIN', 'USER'], { error: 'Expected "ADMIN" or "USER".' })

export const Profile = z
  .object({
    id: z.uuid().describe('Profile id: the membership of the user in this organization'),
    user_details: z
      .object({
        id: z.uuid().describe('User id'),
        email: z.string(),
        first_name: z.string(),
        last_name: z.string(),
        name: z.string().describe('First and last name; empty when the user has none'),
        last_login: z.string().nullable().describe('When the user last signed in interactively (magic link, Google, a switch of organization) into this organization; null if never. Sign-ins into other organizations do not show'),
      })
      .describe('The user behind the profile; email and name are shared by every organization the user belongs to'),
    role: RoleEnum,
    is_active: z.boolean().describe('An inactive profile keeps its history but none of its credentials work'),
    phone: z.string(),
    created_at: z.string(),
  })
  .describe('A member of the organization')

export const OwnProfile = Profile.extend({ org: z.object({ id: z.uuid(), name: z.string() }) }).describe("The caller's own profile with its organization")

export const profileBody = (row: MemberRow): z.infer<typeof Profile> => ({
  id: row.id,
  user_details: { id: row.user_id, email: row.email, first_name: row.first_name, last_name: row.last_name, name: `${row.first_name} ${row.last_name}`.trim(), last_login: row.last_login?.toISOString() ?? null },
  role: row.role,
  is_active: row.is_active,
  phone: row.phone,
  created_at: row.created_at.toISOString(),
})

export const ownProfileBody = (row: MemberRow): z.infer<typeof OwnProfile> => ({ ...profileBody(row), org: { id: row.org_id, name: row.org_name } })

export const Organization = z.object({ id: z.uuid(), name: z.string(), default_currency: z.string(), timezone: z.string(), is_active: z.boolean(), created_at: z.string() })

export const organizationBody = (row: OrganizationRow): z.infer<typeof Organization> => ({ ...row, created_at: row.created_at.toISOString() })

export const PersonName = z.string().trim().max(150, 'At most 150 characters.')

/** The original's single `name`: split at its first space into first_name and the rest as last_name. */
export const FullName = z.string().trim().max(301, 'At most 301 characters.').describe('The whole name (the original has one name field): the first word becomes first_name, the rest last_name; first_name and last_name win when sent too')

/** first_name and last_name from a body that may send the original's `name` instead. */
export function namesOf<B extends { name?: string; first_name?: string; last_name?: string }>(body: B): Omit<B, 'name'> {
  const { name, ...rest } = body
  if (name === undefined) return rest
  const space = name.indexOf(' ')
  const [first, last] = space === -1 ? [name, ''] : [name.slice(0, space), name.slice(space + 1).trim()]
  return { ...rest, first_name: body.first_name ?? first.slice(0, 150), last_name: body.last_name ?? last.slice(0, 150) }
}

export const Phone = z
  .string()
  .trim()
  .max(30, 'At most 30 characters.')
  .regex(/^[+\d\s().-]*$/, 'Expected a phone number: digits, spaces and + ( ) - . only.')

export const OrgName = z.string().trim().min(1, 'This field may not be blank.').max(255, 'At most 255 characters.')

export const Currency = z
  .string()
  .trim()
  .toUpperCase()
  .refine(isCurrency, 'Expected an ISO 4217 currency code, such as "USD".')
  .describe('ISO 4217 code; stored in upper case')

export const Timezone = z
  .string()
  .refine(isTimezone, 'Expected an IANA time zone name, such as "Europe/Paris" (see GET /api/org/timezones/).')
  .describe('IANA time zone name, as listed by GET /api/org/timezones/ (aliases such as Asia/Kolkata are accepted too)')

/** limit/offset pagination (§4.1): default page size 10, no maximum. */
export const Pagination = z.object({
  limit: z.coerce.number().int('Expected a whole number.').min(1, 'Expected at least 1.').default(10),
  offset: z.coerce.number().int('Expected a whole number.').min(0, 'Expected 0 or more.').default(0),
})
