import { leadsProjector } from '../projections/lead/leads.ts'
import type { ModuleManifest } from './manifest.ts'

/** Leads: prospects, their board, comments and attachments, CSV upload and web capture. */
export const leadModule: ModuleManifest = {
  name: 'lead',
  routes: async (deps, files) => {
    const [{ leadRoutes }, { leadUploadRoutes }, { leadCaptureRoutes }, { leadBoardRoutes }] = await Promise.all([import('../http/leads/leads.ts'), import('../http/leads/lead-upload.ts'), import('../http/leads/lead-capture.ts'), import('../http/leads/lead-board.ts')])
    return [leadRoutes(deps, files), leadUploadRoutes(deps), leadCaptureRoutes(deps), leadBoardRoutes(deps)]
  },
  projectors: [leadsProjector],
  idKinds: [
    [/^\/api\/leads\/comment\/\{id\}/, 'leadComment'],
    [/^\/api\/leads\/attachment\/\{id\}/, 'leadAttachment'],
    [/^\/api\/leads\/\{id\}/, 'lead'],
  ],
}
