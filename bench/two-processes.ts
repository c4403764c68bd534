/**
 * Issue 21: two API processes on one database, one leading the projections. Creates are sent to
 * each in turn, at 8 and 32 clients; the RYW wait columns are how long those writes waited for the
 * read models on that process. The follower learns of the leader's commits through its
 * announcements (NOTIFY on crm_checkpoints), not by polling; the target is a follower's RYW wait
 * p99 within 1.5× the leader's. A follower's cell is also creates served while the leader applies
 * the projections and serves nothing: the CPU per create counts both processes.
 */
import type { BenchApp } from './app.ts'
import { cannon } from './cannon.ts'
import type { Cell } from './measure.ts'

export const LEADER = '2 processes: HTTP create deal on the leader'
export const FOLLOWER = '2 processes: HTTP create deal on the follower'

export async function twoProcessCells(start: (options?: { applies?: boolean }) => Promise<BenchApp>, seconds: number, clientCounts: number[]): Promise<{ cells: Cell[]; apps: BenchApp[] }> {
  const first = await start()
  const deadline = Date.now() + 30_000
  for (let units = await first.units(); units.held < units.of; units = await first.units()) {
    if (Date.now() > deadline) throw new Error('the first bench server did not take every projection unit within 30 s')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  // The follower applies no unit (PROJECTION_APPLY=false): the cells compare waiting on one's own commits with hearing of another's.
  const second = await start({ applies: false })
  const cells: Cell[] = []
  const run = process.pid
  let counter = 0
  for (const app of [first, second]) await app.call('GET', '/api/opportunities/pipelines/')
  for (const clients of clientCounts) {
    for (const [app, workload] of [[first, LEADER], [second, FOLLOWER]] as const) {
      const setupRequest = (request: object) => ({ ...request, body: JSON.stringify({ name: `Two-process deal ${run}-${++counter}`, amount: '1000.00', currency: 'USD' }) })
      cells.push(await cannon(app, workload, clients, seconds, { method: 'POST', path: '/api/opportunities/', setupRequest }, [first.serverPid, second.serverPid]))
    }
  }
  return { cells, apps: [first, second] }
}
