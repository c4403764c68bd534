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

export type AuditEntry = { type: string; at: string; actor_id: string | null }

/** The organization's credential history, grouped by token id (or `api_key` for key rotations). */
export async function credentialHistory(store: EventStore, orgId: string): Promise<Map<string, AuditEntry[]>> {
  const history = new Map<string, AuditEntry[]>()
  for (const event of await store.readStream(auditStream(orgId))) {
    const key = (event.data as { token_id?: string }).token_id ?? (event.type === 'OrganizationApiKeyRotated' ? 'api_key' : undefined)
    if (!key) continue
    const entries = history.get(key) ?? []
    entries.push({ type: event.type, at: event.createdAt.toISOString(), actor_id: (event.metadata.actorId as string | null | undefined) ?? null })
    history.set(key, entries)
  }
  return history
}
