import { readFileSync } from 'node:fs'
import type pg from 'pg'

// Linux's clock ticks per second for /proc/<pid>/stat (USER_HZ, 100 on every architecture Linux runs on).
const TICK_MS = 10

/** A process's user + system CPU time in ms, from /proc; 0 when unreadable (not Linux, a server on another machine). */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS
  } catch {
    return 0
  }
}

const backendsOf = async (pool: pg.Pool): Promise<number[]> => (await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()')).rows.map((r) => r.pid)

/**
 * Starts counting the CPU time of this process and of the database's PostgreSQL backends (the
 * server must be on this machine); the function it returns stops and gives both, in ms. On a
 * machine shared with other work, CPU per unit of work compares across runs where wall time does
 * not. A backend that ends before the stop is not counted.
 */
export async function cpuMeter(pool: pg.Pool): Promise<() => Promise<{ nodeMs: number; backendsMs: number }>> {
  const before = new Map((await backendsOf(pool)).map((pid) => [pid, cpuMsOf(pid)]))
  const node = process.cpuUsage()
  return async () => {
    const { user, system } = process.cpuUsage(node)
    const backendsMs = (await backendsOf(pool)).reduce((sum, pid) => sum + cpuMsOf(pid) - (before.get(pid) ?? 0), 0)
    return { nodeMs: (user + system) / 1000, backendsMs }
  }
}
