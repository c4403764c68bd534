import type { ModuleManifest } from './manifest.ts'
import { tagModule } from './tag.ts'

/**
 * Every module of the service, in the order their routes are registered. Adding a module adds its
 * manifest here (src/modules/<module>.ts) and edits no other shared file: the app, the projection
 * runner, the server's processes and the isolation matrix read this list.
 */
export const MODULES: readonly ModuleManifest[] = [tagModule]
