import type { Deps } from '../deps.ts'
import type { EventDeclaration } from '../events/event-schemas.ts'
import type { FileStore } from '../files/file-store.ts'
import type { RoutePlugin } from '../http/kernel/route-plugin.ts'
import type { Projector } from '../projections/kernel/projector.ts'
import type { RecordKindSpec } from '../projections/record/record-kinds.ts'
import type { SearchKindSpec } from '../projections/search/search-documents.ts'

/** A scheduled process (leader-locked, idempotent): the server starts it, and stops it at shutdown. */
export type Process = { start(): void; stop(): Promise<void> }

/** What a module's processes are built from: the runtime's parts, not an HTTP request. */
export type ProcessDeps = Pick<Deps, 'config' | 'db' | 'store' | 'projections' | 'logger' | 'clock'>

/**
 * The kind of record a path's id names, for the isolation matrix (test/http/isolation-matrix.test.ts):
 * `prefix` matches the path up to its id, e.g. `/^\/api\/tags\/\{id\}/` → `tag`.
 */
export type IdKind = readonly [prefix: RegExp, kind: string]

/**
 * One module, declared in one place (docs/adding-a-module.md): what the app, the projection runner,
 * the server's processes and the tests take from it. Every part is optional: a module without a
 * read model has no projectors, one without routes (none yet) no routes.
 */
export type ModuleManifest = Readonly<{
  /** The module's name, as its folders are named (`tag`, `opportunity`). */
  name: string
  /** Its stored event types by name, declared with `eventsOf<ItsEventUnion>()` (their versions and upcasters are in src/events/versions.ts, which the write path reads). */
  events?: Readonly<Record<string, EventDeclaration>>
  /**
   * Its route plugins, registered in this order (after the modules listed before it). Imported when
   * the app is built, not with the manifest: the template databases, the CLI and the use-case tests
   * read the module list for its projectors, and loading every route's schemas costs ~2 s a process.
   */
  routes?: (deps: Deps, files: FileStore) => Promise<readonly RoutePlugin[]>
  /** Its read models: the runner applies them, the CLI rebuilds them, readiness checks them. */
  projectors?: readonly Projector[]
  /** Its scheduled processes: the server starts them (only the scheduled processes' leader, the holder of the advisory lock, does work). */
  processes?: readonly ((deps: ProcessDeps) => Process)[]
  /** The record kinds its `{id}` paths name. */
  idKinds?: readonly IdKind[]
  /** Path parameters other than `id` (in routes with two ids) → the kind of record each names. */
  idParams?: Readonly<Record<string, string>>
  /**
   * The stream categories whose records are people (`contact`, `lead`; issue 31): their events'
   * personal fields are sealed under each record's own data key, and POST /api/privacy/erasures/
   * erases one by `kind` (the category) and `id`.
   */
  subjects?: readonly string[]
  /** Its records in global search: the document each keeps, from which events (the search module reads every manifest's). */
  search?: SearchKindSpec
  /** Its records in the activity feed and notifications: their names, pages, the feed's entries, the events that notify (the activity and notification modules read every manifest's). */
  record?: RecordKindSpec
}>

/**
 * A module over the others' declarations (search, the activity feed, notifications): listed like
 * any module, built from the plain manifests of the list, so a module that joins it declares so in
 * its own manifest and the module over them imports none of them.
 */
export type ModuleOverModules = (modules: readonly ModuleManifest[]) => ModuleManifest
