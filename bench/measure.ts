import { cellFinished } from './progress.ts'

/** Runs `op` from `clients` concurrent loops for `seconds`, and summarizes throughput and latency. */
export type Cell = {
  workload: string
  clients: number
  ops: number
  opsPerSec: number
  eventsPerSec: number
  p50Ms: number
  p99Ms: number
  errors: number
  /** HTTP cells (bench/cannon.ts): non-2xx answers, the process's peak RSS, read-your-writes waits. */
  non2xx?: number
  peakRssMb?: number
  rywP50Ms?: number
  rywP99Ms?: number
  /** Append cells (bench/cpu-cost.ts): CPU µs per op, the bench process's and the database backends'. */
  cpuUsPerOp?: number
  /** Of which the Node processes' (the rest is PostgreSQL's). */
  nodeCpuUsPerOp?: number
}

export async function measure(workload: string, clients: number, seconds: number, eventsPerOp: number, op: (client: number, i: number) => Promise<void>): Promise<Cell> {
  const latencies: number[] = []
  let errors = 0
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const t0 = performance.now()
        try {
          await op(client, i)
          latencies.push(performance.now() - t0)
        } catch {
          errors++
        }
      }
    }),
  )
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN
  const ops = latencies.length
  const cell = { workload, clients, ops, opsPerSec: ops / elapsed, eventsPerSec: (ops * eventsPerOp) / elapsed, p50Ms: pct(0.5), p99Ms: pct(0.99), errors }
  cellFinished(cell)
  return cell
}
