import type { RebuildProgress } from './rebuild.ts'

/**
 * For `projections rebuild` on a long log: a line on stderr at most every `everyMs` (and at the
 * end of the replay) with the events replayed, their rate, the share of the log and the time left.
 */
export function progressLine(write: (line: string) => void = (line) => process.stderr.write(line), everyMs = 2000): (progress: RebuildProgress) => void {
  let last = 0
  return (p) => {
    const now = Date.now()
    if (now - last < everyMs && p.done < 1) return
    last = now
    const eta = p.etaSeconds === null ? '?' : `${p.etaSeconds} s`
    write(`${p.name} v${p.version}: ${p.events.toLocaleString('en-US')} events, ${p.eventsPerSecond.toLocaleString('en-US')} events/s, ${(p.done * 100).toFixed(1)}% of the log, ETA ${eta}\n`)
  }
}
