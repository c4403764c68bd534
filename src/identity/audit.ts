import type { EventMetadata, EventStore } from '../eventstore/event-store.ts'

/** Credential lifecycle, recorded in each organization's audit stream. Never carries a secret or its hash. */
export type CredentialAuditEvent =
  | { type: 'PersonalAccessTokenCreated'; data: { token_id: string; profile_id: string; name: string; token_prefix: string; scopes: string[]; expires_at: string | null } }
  | { type: 'PersonalAccessTokenFirstUsed'; data: { token_id: string; profile_id: string } }
  | { type: 'PersonalAccessTokenRevoked'; data: { token_id: string; profile_id: string; revoked_by: string | null } }
  | { type: 'OrganizationApiKeyRotated'; data: { key_prefix: string; rotated_by: string | null } }

export const auditStream = (orgId: string) => `org_audit-${orgId}`

export async function recordCredentialEvent(store: EventStore, orgId: string, event: CredentialAuditEvent, metadata: EventMetadata): Promise<void> {
  await store.appendToStream(auditStream(orgId), [{ type: event.type, data: event.data, metadata: { ...metadata, orgId } }])
}
