/**
 * Workload 4: deal commands end to end over HTTP (autocannon → fastify → command → event store →
 * projections → answer). Every write answers only once its events are in the read models
 * (read-your-writes), so each latency includes projection. The RYW wait columns are the time those
 * requests spent waiting for the projections, the projection lag they observed.
 */
import type { BenchApp } from './app.ts'
import { cannon } from './cannon.ts'
import type { Cell } from './measure.ts'

const POOL = 200

export async function httpCells(bench: BenchApp, seconds: number, clientCounts: number[]): Promise<Cell[]> {
  const cells: Cell[] = []
  const run = process.pid
  let counter = 0
  // Creates the default pipeline (first use) before the create cells, as a first request would.
  await bench.call('GET', '/api/opportunities/pipelines/')
  for (const clients of clientCounts) {
    const setupRequest = (request: object) => ({ ...request, body: JSON.stringify({ name: `Bench deal ${run}-${++counter}`, amount: '1000.00', currency: 'USD' }) })
    cells.push(await cannon(bench, 'HTTP create deal (POST)', clients, seconds, { method: 'POST', path: '/api/opportunities/', setupRequest }))
  }
  const ids: string[] = []
  for (let i = 0; i < POOL; i++) ids.push((await bench.call('POST', '/api/opportunities/', { name: `Pooled deal ${i}`, stage: 'QUALIFICATION' })).body.id)
  for (const clients of clientCounts) {
    const setupRequest = (request: object) => {
      const n = ++counter
      return { ...request, path: `/api/opportunities/${ids[n % POOL]}/`, body: JSON.stringify({ description: `edit ${n}` }) }
    }
    cells.push(await cannon(bench, `HTTP PATCH deal (${POOL} deals)`, clients, seconds, { method: 'PATCH', setupRequest }))
  }
  // Each deal alternates between the two columns: its k-th move goes to PROPOSAL when k is odd.
  const moves = new Map<string, number>()
  for (const clients of clientCounts) {
    const setupRequest = (request: object) => {
      const id = ids[++counter % POOL]!
      const k = (moves.get(id) ?? 0) + 1
      moves.set(id, k)
      return { ...request, path: `/api/opportunities/${id}/move/`, body: JSON.stringify({ column_id: k % 2 ? 'PROPOSAL' : 'QUALIFICATION' }) }
    }
    cells.push(await cannon(bench, `HTTP move deal (${POOL} deals)`, clients, seconds, { method: 'PATCH', setupRequest }))
  }
  return cells
}
