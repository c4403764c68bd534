/** A member's role in their organization (the profiles table's `role`). */
export type Role = 'ADMIN' | 'USER'

/** Who is calling, derived only from the credential (never from a client-supplied org). */
export type Identity = Readonly<{
  /** Null for the organization API key, which belongs to no user. */
  userId: string | null
  /** Null for the organization API key, which belongs to no user. */
  profileId: string | null
  orgId: string
  role: Role
  email: string | null
  credential: 'jwt' | 'pat' | 'api_key'
  /** PAT scopes (`<resource>:<action>`); empty means unrestricted. Always empty for other credentials. */
  scopes: readonly string[]
  /** Id of the PAT used, for audit. */
  tokenId: string | null
}>

export const isAdmin = (identity: Identity) => identity.role === 'ADMIN'
