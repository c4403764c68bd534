/**
 * CPU per operation of a cell: the CPU time of the Node processes doing the work (this one for the
 * append cells, the bench server for the HTTP ones, not the load generator) plus that of the
 * database's server processes (all read from /proc, so only when PostgreSQL runs on this machine),
 * over the cell's operations. Unlike ops/s, it hardly depends on what the machine's other tenants
 * take meanwhile, so it compares two runs on a shared machine: on a saturated one, ops/s is cores /
 * CPU per op.
 */
import { readFileSync } from 'node:fs'
import type pg from 'pg'
import { cpuMs } from './app.ts'

/** Whether `pid` is a PostgreSQL process of this machine: a remote server's backend pids name unrelated processes here, or none. */
function isLocalPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('postgres')
  } catch {
    return false
  }
}

/** CPU µs so far of the given processes and of each backend connected to the pool's database (those of `application` only, when given), by pid; undefined when /proc does not show the backends. */
async function cpuUs(pool: pg.Pool, pids: readonly number[], application?: string): Promise<Map<number, number> | undefined> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND ($1::text IS NULL OR application_name = $1)', [application ?? null])
  const backends = rows.map((row) => row.pid)
  if (!backends.every(isLocalPostgres)) return undefined
  return new Map([...pids, ...backends].map((pid) => [pid, cpuMs(pid) * 1000]))
}

/**
 * Runs `cell` and answers its result with the CPU µs per op spent by `pids` and the database's
 * backends, and by `pids` alone (undefined when they cannot be read): each backend's CPU since before the
 * cell, all of it for one that connected during the cell (one that disconnected meanwhile is lost,
 * rare: pools keep idle connections 10 s, longer than the gap between cells). `application`: only
 * the backends of connections with that application_name (a process's own, bench/projector.ts).
 */
export async function withCpuCost<C extends { ops: number }>(pool: pg.Pool, pids: readonly number[], cell: () => Promise<C>, application?: string): Promise<C & { cpuUsPerOp?: number; nodeCpuUsPerOp?: number }> {
  const before = await cpuUs(pool, pids, application)
  const result = await cell()
  const after = await cpuUs(pool, pids, application)
  if (before === undefined || after === undefined || result.ops === 0) return result
  let spent = 0
  let node = 0
  for (const [pid, us] of after) {
    spent += us - (before.get(pid) ?? 0)
    if (pids.includes(pid)) node += us - (before.get(pid) ?? 0)
  }
  return { ...result, cpuUsPerOp: spent / result.ops, nodeCpuUsPerOp: node / result.ops }
}
