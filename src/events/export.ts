import type { Writable } from 'node:stream'
import { once } from 'node:events'
import { START, formatPosition } from '../eventstore/event-store.ts'
import type { EventStore, Position, RecordedEvent } from '../eventstore/event-store.ts'
import { delay } from '../eventstore/wakeup.ts'
import { decodeEvent } from './versions.ts'

/** An event as it leaves the service (the feed, the streams, an export): upcast to its current shape. */
export const exportedEvent = (e: RecordedEvent) => ({
  position: formatPosition(e.position),
  stream: e.streamName,
  revision: Number(e.revision),
  type: e.type,
  data: decodeEvent(e).data,
  at: e.createdAt.toISOString(),
})

export type ExportOptions = { orgId: string; after?: Position; types?: string[]; pageSize?: number }
export type ExportProgress = { exported: number; scanned_to: string; events_per_s: number }

const HIDDEN_WAIT_MS = 10_000
const HIDDEN_RETRY_MS = 20

/**
 * Writes the organization's events in commit order as NDJSON to `out`, one page of the log at a
 * time and waiting for `out` to drain, so memory stays flat however long the log. `progress` hears
 * where the scan stands about once a second; the answer's `resume` is the `--from` that continues
 * after the last event scanned.
 */
export async function exportEvents(store: EventStore, out: Writable, options: ExportOptions, progress: (p: ExportProgress) => void = () => {}) {
  const started = Date.now()
  let cursor = options.after ?? START
  let exported = 0
  let told = started
  let hiddenSince: number | undefined
  const tell = () => progress({ exported, scanned_to: formatPosition(cursor), events_per_s: Math.round((exported * 1000) / Math.max(1, Date.now() - started)) })
  for (;;) {
    const page = await store.readAll({ after: cursor, maxCount: options.pageSize ?? 1000, eventTypes: options.types })
    const lines = page.events.filter((e) => e.metadata.orgId === options.orgId).map((e) => `${JSON.stringify(exportedEvent(e))}\n`)
    exported += lines.length
    if (lines.length > 0 && !out.write(lines.join(''))) await once(out, 'drain')
    cursor = page.scannedTo
    if (Date.now() - told >= 1000) {
      told = Date.now()
      tell()
    }
    // Committed events hidden behind another open transaction (another database's, on a shared
    // server) are waited for, briefly: an export ends at what was committed, not at what was visible.
    if (!page.isEnd) continue
    hiddenSince = page.moreHidden ? (hiddenSince ?? Date.now()) : undefined
    if (hiddenSince === undefined || Date.now() - hiddenSince > HIDDEN_WAIT_MS) break
    await delay(HIDDEN_RETRY_MS)
  }
  tell()
  return { exported, resume: formatPosition(cursor) }
}
