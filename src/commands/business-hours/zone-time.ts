/**
 * Wall-clock time in an IANA time zone, from the runtime's Intl data (no dependency): the offset of
 * a zone at an instant, and the UTC stretches over which that offset holds. Pure: no clock is read.
 */

export const MINUTE_MS = 60_000
export const DAY_MS = 86_400_000

// One formatter per zone: building one costs far more than formatting with it. A cache of pure
// values, not state: the same zone always gives the same formatter.
const formats = new Map<string, Intl.DateTimeFormat>()

function wallClockFormat(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
    formats.set(zone, format)
  }
  return format
}

/**
 * The zone's offset at instant `t` (ms since the epoch): its wall-clock reading minus UTC, in ms
 * (New York in winter: -5 h). Offsets are whole seconds, so `t` is read to the second.
 */
export function zoneOffsetMs(zone: string, t: number): number {
  const second = Math.floor(t / 1000) * 1000
  const parts: Record<string, number> = {}
  for (const part of wallClockFormat(zone).formatToParts(second)) if (part.type !== 'literal') parts[part.type] = Number(part.value)
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!)
  return wall - second
}

/** A stretch of UTC time [start, end) over which the zone's wall clock reads `start + offset` onwards, without a jump. */
export type OffsetStretch = { start: number; end: number; offset: number }

/** The first whole second in (lo, hi] at which the offset is no longer `offset`, by bisection (lo has it, hi does not). */
function transitionBetween(zone: string, lo: number, hi: number, offset: number): number {
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2000) * 1000
    if (mid <= lo) break
    if (zoneOffsetMs(zone, mid) === offset) lo = mid
    else hi = mid
  }
  return hi
}

// Offsets at UTC midnights, where every walk probes: SLA figures for many cases walk the same days.
// Pure values again (an instant's offset never changes), a few bytes per zone and day walked.
const midnightOffsets = new Map<string, Map<number, number>>()

function offsetAtMidnight(zone: string, midnight: number): number {
  let ofZone = midnightOffsets.get(zone)
  if (!ofZone) midnightOffsets.set(zone, (ofZone = new Map()))
  let offset = ofZone.get(midnight)
  if (offset === undefined) ofZone.set(midnight, (offset = zoneOffsetMs(zone, midnight)))
  return offset
}

/** The offset at `t`, from the cached midnights around it unless the zone changes its offset that day. */
function offsetAt(zone: string, t: number): number {
  const midnight = Math.floor(t / DAY_MS) * DAY_MS
  const before = offsetAtMidnight(zone, midnight)
  return before === offsetAtMidnight(zone, midnight + DAY_MS) ? before : zoneOffsetMs(zone, t)
}

/**
 * The stretches of constant offset from `from` on, in order and without gaps: up to each next UTC
 * midnight, split at a transition where the two ends have different offsets. (A zone that changed
 * its offset and back within one day would be read as not changing; the tz database has none
 * since the 1940s.) Endless: the caller stops pulling.
 */
export function* offsetStretches(zone: string, from: number): Generator<OffsetStretch> {
  let start = from
  let offset = offsetAt(zone, from)
  for (;;) {
    const end = (Math.floor(start / DAY_MS) + 1) * DAY_MS
    const endOffset = offsetAtMidnight(zone, end)
    if (endOffset === offset) {
      yield { start, end, offset }
      start = end
    } else {
      const change = transitionBetween(zone, start, end, offset)
      yield { start, end: change, offset }
      start = change
      offset = zoneOffsetMs(zone, change)
    }
  }
}
