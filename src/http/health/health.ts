import { sql } from 'kysely'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { projectionsStatus } from '../../projections/kernel/status.ts'
import type { Deps } from '../../deps.ts'

const Check = z.object({ name: z.string(), ok: z.boolean(), detail: z.string().nullable() })
const Readiness = z.object({ status: z.enum(['ready', 'not_ready']), checks: z.array(Check) })
type Check = z.infer<typeof Check>

/** Liveness says the process answers; readiness says it can serve fresh reads right now. */
export function healthRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/healthz', { schema: { tags: ['operations'], summary: 'Liveness', response: { 200: z.object({ status: z.literal('ok') }) } } }, async () => ({
      status: 'ok' as const,
    }))

    app.get(
      '/readyz',
      { schema: { tags: ['operations'], summary: 'Readiness: database reachable, projections caught up within the bound', response: { 200: Readiness, 503: Readiness } } },
      async (_request, reply) => {
        const checks = await readinessChecks(deps)
        const ready = checks.every((c) => c.ok)
        return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks })
      },
    )
  }
}

async function readinessChecks({ db, store, projections, config }: Deps): Promise<Check[]> {
  try {
    await sql`SELECT 1`.execute(db)
  } catch (error) {
    return [{ name: 'database', ok: false, detail: error instanceof Error ? error.message : String(error) }]
  }
  const checks: Check[] = [{ name: 'database', ok: true, detail: null }]
  const bound = config.readyMaxLagMs
  const status = await projectionsStatus(db, store, projections.projectors, { lagEventsCap: 1, failures: projections.failures })
  const { visibility } = status
  checks.push({
    name: 'event-visibility',
    ok: visibility.hiddenForMs <= bound,
    detail: visibility.hiddenEvents === 0 ? null : `${visibility.hiddenEvents} committed events hidden for ${visibility.hiddenForMs} ms behind open transaction of pid ${visibility.blocker?.pid ?? '?'}`,
  })
  for (const p of status.projectors) {
    // A new version building beside a serving old one keeps the process ready: the old tables answer.
    if (p.storedVersion !== null && p.storedVersion !== p.version && projections.rebuilds.has(p.name)) {
      const progress = projections.rebuilds.get(p.name)
      const eta = progress?.etaSeconds != null ? `, about ${progress.etaSeconds} s left` : ''
      checks.push({ name: `projection:${p.name}`, ok: true, detail: `version ${p.storedVersion} serves while version ${p.version} builds${eta}` })
      continue
    }
    const built = p.storedVersion === p.version
    checks.push({
      name: `projection:${p.name}`,
      ok: built && p.lagMs <= bound && p.failure === null,
      detail: !built ? 'building' : p.failure ?? (p.lagMs > 0 ? `lagging ${p.lagMs} ms` : null),
    })
  }
  return checks
}
