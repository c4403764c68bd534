import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { applyPack, clearSampleData } from '../../commands/pack/apply-pack.ts'
import { PACKS } from '../../commands/pack/catalogue.ts'
import type { SampleKind } from '../../commands/pack/sample-data.ts'
import type { Deps } from '../../deps.ts'
import { callerOf, settle } from '../kernel/commands.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'

const TAGS = ['packs']
const errors = { ...authErrors, 404: ErrorBody } as const

const PackView = z.object({ id: z.string(), name: z.string(), description: z.string(), version: z.number().int() })
const ReportItem = z.object({ type: z.string().describe('`sample_account`, `sample_contact`, `sample_deal`, `sample_lead`, `sample_task`, or `sample_data` (the whole set, skipped while sample data is present)'), name: z.string() })
const Report = z.object({ created: z.array(ReportItem), skipped: z.array(ReportItem.extend({ reason: z.string() })), failed: z.array(ReportItem) })
const ByType = z.record(z.string(), z.number().int())

/** `{sample_account: 2, …}`, the original's keys. */
const byType = (counts: Partial<Record<SampleKind, number>>) => Object.fromEntries(Object.entries(counts).map(([kind, n]) => [`sample_${kind}`, n]))

/**
 * Sample-data packs (the original's vertical packs, their sample data): the list (any member), an
 * apply that creates the pack's records through their modules' own commands (admins), and the
 * clear that deletes exactly those records (admins), keeping any that real work now points at.
 */
export function packRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/api/packs/', { schema: { tags: TAGS, summary: 'The sample-data packs this server offers, by name (any member)', response: { 200: z.object({ packs: z.array(PackView) }), ...errors } } }, async () => ({
      packs: PACKS.map(({ id, name, description, version }) => ({ id, name, description, version })).sort((a, b) => a.name.localeCompare(b.name)),
    }))

    app.post('/api/packs/:pack_id/apply/', { schema: { tags: TAGS, summary: "Apply a pack's sample data to the organization (admins)", description: 'Its accounts, contacts, deals, leads and tasks are created as a user\'s would be (the same events and history), and remembered as sample data. Safe to repeat: while sample data is present another apply adds nothing (`sample_data` skipped); an item whose name or email is already taken is skipped. An unknown pack is 404.', params: z.object({ pack_id: z.string().max(100) }), response: { 200: z.object({ report: Report }), ...errors } } }, async (request, reply) => {
      const { report, position } = await applyPack(deps, callerOf(request), request.params.pack_id)
      await settle(deps, reply, position)
      return { report }
    })

    app.delete('/api/packs/sample-data/', { schema: { tags: TAGS, summary: 'Delete the sample records the packs created (admins), and nothing else', description: 'Records users made are never touched. A sample record that a record outside the sample set points at (a real deal on a sample account, a real task on a sample lead) is kept and counted in `retained_by_type`. `deleted` is the total.', response: { 200: z.object({ deleted: z.number().int(), deleted_by_type: ByType, retained_by_type: ByType }), ...errors } } }, async (request, reply) => {
      const { deleted, retained, position } = await clearSampleData(deps, callerOf(request))
      await settle(deps, reply, position)
      return { deleted: Object.values(deleted).reduce((sum, n) => sum + n, 0), deleted_by_type: byType(deleted), retained_by_type: byType(retained) }
    })
  }
}
