/**
 * Issue 36: the projections' CPU per create. Deal creates over HTTP at each client count, with the
 * projections applied by bench/projector.ts, a process that serves no HTTP (the bench server
 * follows it): that process's CPU and its database backends' over the creates answered is what
 * applying a create's events costs, whatever the HTTP side spends. Every create answers after its
 * events are applied (read-your-writes), so the creates a cell counts are the ones it applied.
 */
import type { BenchApp } from './app.ts'
import { PROJECTOR_APP, startBenchApp, startProjector } from './app.ts'
import { cannon } from './cannon.ts'
import type { Cell } from './measure.ts'

export const PROJECTION_CPU = 'projections: CPU per create (the process applying them, and its backends)'

export async function projectionCpuCells(databaseUrl: string, seconds: number, clientCounts: number[], flags?: string[]): Promise<Cell[]> {
  const projector = await startProjector(databaseUrl, flags)
  let bench: BenchApp | undefined
  try {
    bench = await startBenchApp(databaseUrl, { applies: false })
    if ((await bench.units()).held > 0) throw new Error('the bench server applies projection units, not only the bench projector')
    await bench.call('GET', '/api/opportunities/pipelines/')
    const cells: Cell[] = []
    let counter = 0
    for (const clients of clientCounts) {
      const setupRequest = (request: object) => ({ ...request, body: JSON.stringify({ name: `Projected deal ${++counter}`, amount: '1000.00', currency: 'USD' }) })
      cells.push(await cannon(bench, PROJECTION_CPU, clients, seconds, { method: 'POST', path: '/api/opportunities/', setupRequest }, [projector.pid], PROJECTOR_APP))
    }
    return cells
  } finally {
    await bench?.stop()
    await projector.stop()
  }
}
