/** One autocannon cell against the bench server, as a table row: ops/s, latency, non-2xx, the server's peak RSS, read-your-writes waits. */
import autocannon from 'autocannon'
import type { Request, Result } from 'autocannon'
import type { BenchApp } from './app.ts'
import { withCpuCost } from './cpu-cost.ts'
import type { Cell } from './measure.ts'
import { cellFinished } from './progress.ts'

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN

/** Non-2xx answers seen, by status and body (first 200 characters): status body → count. */
export const failures = new Map<string, number>()

/** `cpuPids`: the server processes whose CPU the cell counts (by default the one it loads); `application`: only the backends of that application_name count (every backend of the database by default). */
export async function cannon(bench: BenchApp, workload: string, connections: number, seconds: number, request: Request, cpuPids = [bench.serverPid], application?: string): Promise<Cell> {
  // Only waits of positions appended from now on count (not e.g. the default pipeline's, re-checked per request).
  await bench.startRywWaits(await headPosition(bench))
  let peakRss = bench.serverRssMb()
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, bench.serverRssMb())), 100)
  const onResponse = (status: number, body: string) => {
    if (status >= 200 && status < 300) return
    const key = `${status} ${body.slice(0, 200)}`
    failures.set(key, (failures.get(key) ?? 0) + 1)
  }
  // CPU per answer: the server processes' and the database backends', not autocannon's.
  const costed = await withCpuCost(bench.pool, cpuPids, async () => {
    const result = await autocannon({ url: bench.url, connections, duration: seconds, headers: { ...bench.admin.headers, 'content-type': 'application/json' }, requests: [{ ...request, onResponse }] })
    return cellOf(workload, connections, result)
  }, application)
  clearInterval(sampler)
  const waits = (await bench.collectRywWaits()).sort((a, b) => a - b)
  const cell = { ...costed, peakRssMb: Math.round(peakRss), ...(waits.length ? { rywP50Ms: pct(waits, 0.5), rywP99Ms: pct(waits, 0.99) } : {}) }
  cellFinished(cell)
  return cell
}

/** An autocannon result as a table row: ops/s counts 2xx answers only. */
export function cellOf(workload: string, clients: number, result: Result): Cell {
  return {
    workload,
    clients,
    ops: result['2xx'],
    opsPerSec: result['2xx'] / result.duration,
    eventsPerSec: NaN,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.non2xx + result.errors,
    non2xx: result.non2xx,
  }
}

/** The log's current head: the position of a throwaway append (a stream no projector reads). */
async function headPosition(bench: BenchApp) {
  return (await bench.store.appendToStream(`bench-marker-${Date.now()}-${Math.random()}`, [{ type: 'BenchMarker', data: {} }])).position
}
