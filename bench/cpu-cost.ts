/**
 * CPU per operation of a cell: the CPU time of the Node processes doing the work (this one for the
 * append cells, the bench server for the HTTP ones, not the load generator) plus that of the
 * database's server processes (all read from /proc, so only when PostgreSQL runs on this machine),
 * over the cell's operations. Unlike ops/s, it does not depend on what the machine's other tenants take meanwhile,
 * so it compares two appenders on a shared machine: on a saturated one, ops/s is cores / CPU per op.
 */
import { readFileSync } from 'node:fs'
import type pg from 'pg'

/** Linux's clock ticks per second for /proc/<pid>/stat (USER_HZ, 100 on every common platform). */
const TICK_US = 10_000

/** CPU µs so far of the given processes and of each backend connected to the pool's database, by pid; undefined when /proc does not show them. */
async function cpuUs(pool: pg.Pool, pids: readonly number[]): Promise<Map<number, number> | undefined> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()')
  const cpu = new Map<number, number>()
  for (const pid of [...pids, ...rows.map((row) => row.pid)]) {
    try {
      // A remote server's backend pids name unrelated processes here, or none.
      if (!pids.includes(pid) && !readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('postgres')) return undefined
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * TICK_US)
    } catch {
      return undefined
    }
  }
  return cpu
}

/**
 * Runs `cell` and answers its result with the CPU µs per op spent by `pids` and the database's
 * backends, and by `pids` alone (undefined when they cannot be read): each backend's CPU since before the
 * cell, all of it for one that connected during the cell (one that disconnected meanwhile is lost,
 * rare: pools keep idle connections 10 s, longer than the gap between cells).
 */
export async function withCpuCost<C extends { ops: number }>(pool: pg.Pool, pids: readonly number[], cell: () => Promise<C>): Promise<C & { cpuUsPerOp?: number; nodeCpuUsPerOp?: number }> {
  const before = await cpuUs(pool, pids)
  const result = await cell()
  const after = await cpuUs(pool, pids)
  if (before === undefined || after === undefined || result.ops === 0) return result
  let spent = 0
  let node = 0
  for (const [pid, us] of after) {
    spent += us - (before.get(pid) ?? 0)
    if (pids.includes(pid)) node += us - (before.get(pid) ?? 0)
  }
  return { ...result, cpuUsPerOp: spent / result.ops, nodeCpuUsPerOp: node / result.ops }
}
