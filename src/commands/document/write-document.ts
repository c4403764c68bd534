import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { ValidationError } from '../../errors.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { relationErrors } from '../../projections/record/relations.ts'
import type { Caller } from '../caller.ts'
import { actorOfCaller } from '../caller.ts'
import { commandSession } from '../command-session.ts'
import type { CommandSession } from '../command-session.ts'
import { withClaimedName, withReleasedName, withRenamedClaim } from '../unique-name.ts'
import { DOCUMENT_TITLE_SCOPE, documentDecider, documentStream } from './document.ts'
import type { DocumentFields, DocumentFile } from './document.ts'

type DocumentDeps = Pick<Deps, 'db' | 'store' | 'clock'>

/** What the use cases know of a document before deciding: its title (for the claim) and its shares (ids it holds may stay). */
export type CurrentDocument = { id: string; title: string; assigned_to: readonly string[]; teams: readonly string[] }

/** 400 naming `shared_to` or `teams` when they add an id that is not an active profile or a team of the organization. */
async function checkShares(db: Deps['db'], orgId: string, requested: Partial<DocumentFields>, current?: CurrentDocument): Promise<void> {
  const [profiles, teams] = await Promise.all([relationErrors(db, orgId, 'profiles', requested.shared_to, current?.assigned_to), relationErrors(db, orgId, 'teams', requested.teams, current?.teams)])
  if (profiles || teams) throw new ValidationError({ ...(profiles && { shared_to: profiles }), ...(teams && { teams }) })
}

const claimOf = (orgId: string, ownerId: string) => ({ scope: DOCUMENT_TITLE_SCOPE, orgId, ownerId, field: 'title' })

/**
 * Uploads a document (any member): the file already in the file store (`file.storage_key`), its
 * title claimed in the organization (400 on `title` when taken), its shares checked.
 */
export async function uploadDocument(deps: DocumentDeps, caller: Caller, input: { fields: DocumentFields; file: DocumentFile }, session: CommandSession = commandSession(deps.store, caller)): Promise<{ id: string; position: Position | null }> {
  await checkShares(deps.db, caller.orgId, input.fields)
  const id = randomUUID()
  const command = { type: 'UploadDocument' as const, documentId: id, orgId: caller.orgId, actor: actorOfCaller(caller), ...input, at: deps.clock().toISOString() }
  await withClaimedName(session.run, { ...claimOf(caller.orgId, id), name: input.fields.title }, (run) => run(documentDecider, documentStream(id), command))
  return { id, position: session.position() }
}

/**
 * Changes the named fields of a document and/or replaces its file (its uploader or an admin; the
 * decider refuses anyone else). Answers whether a new file replaced the stored one, so the caller
 * removes the old bytes only once the change is recorded.
 */
export async function changeDocument(deps: DocumentDeps, caller: Caller, current: CurrentDocument, change: { changes: Partial<DocumentFields>; file?: DocumentFile }, session: CommandSession = commandSession(deps.store, caller)): Promise<{ replaced: boolean; position: Position | null }> {
  await checkShares(deps.db, caller.orgId, change.changes, current)
  const command = { type: 'ChangeDocument' as const, orgId: caller.orgId, actor: actorOfCaller(caller), ...change, at: deps.clock().toISOString() }
  const title = change.changes.title ?? current.title
  const { events } = await withRenamedClaim(session.run, { ...claimOf(caller.orgId, current.id), name: title, previousName: current.title }, (run) => run(documentDecider, documentStream(current.id), command))
  return { replaced: events.some((event) => event.type === 'DocumentFileReplaced'), position: session.position() }
}

/** Deletes a document (its uploader or an admin), freeing its title. Answers whether it was deleted now, so the caller removes its file. */
export async function deleteDocument(deps: DocumentDeps, caller: Caller, current: CurrentDocument, session: CommandSession = commandSession(deps.store, caller)): Promise<{ deleted: boolean; position: Position | null }> {
  const command = { type: 'DeleteDocument' as const, orgId: caller.orgId, actor: actorOfCaller(caller), at: deps.clock().toISOString() }
  const { events } = await withReleasedName(session.run, { scope: DOCUMENT_TITLE_SCOPE, orgId: caller.orgId, ownerId: current.id, name: current.title }, (run) => run(documentDecider, documentStream(current.id), command))
  return { deleted: events.length > 0, position: session.position() }
}
