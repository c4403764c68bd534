/**
 * The bench's progress on stderr (stdout gets only the final table): a line per cell as it
 * finishes, and every few seconds during the phases that take minutes (seeding, projecting).
 */
import type { Cell } from './measure.ts'

export const progress = (line: string): void => console.error(`[bench] ${line}`)

export function cellFinished(cell: Cell): void {
  const rss = cell.peakRssMb === undefined ? '' : `, server peak RSS ${cell.peakRssMb} MB`
  progress(`${cell.workload}, ${cell.clients} client${cell.clients > 1 ? 's' : ''}: ${cell.opsPerSec.toFixed(0)} ops/s, p99 ${cell.p99Ms.toFixed(1)} ms, ${cell.errors} errors${rss}`)
}

/** Prints `line()` every `everyMs` while `work` runs; a line that fails to compute is skipped. */
export async function reporting<T>(everyMs: number, line: () => string | Promise<string>, work: Promise<T>): Promise<T> {
  const timer = setInterval(() => {
    Promise.resolve()
      .then(line)
      .then(progress, () => {})
  }, everyMs)
  try {
    return await work
  } finally {
    clearInterval(timer)
  }
}

/** `n / total` with the rate since `t0` (performance.now()), for the reporting lines. */
export const countLine = (what: string, n: number, total: number, t0: number): string =>
  `${what}: ${n.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}, ${Math.round(n / ((performance.now() - t0) / 1000)).toLocaleString('en-US')}/s`
