/**
 * Pure translations between the event store port and KurrentDB records. They take structural
 * shapes instead of the client's types so that kurrentdb.ts stays the only file importing the
 * client; tsc still checks the shapes against the client's types where kurrentdb.ts passes them.
 */
import { START, comparePositions } from './event-store.ts'
import type { EventMetadata, NewEvent, Position, ReadAllPage, RecordedEvent, WrongExpectedRevisionError } from './event-store.ts'

/** Reserved metadata key carrying the port's schema version; stripped again when reading. */
export const SCHEMA_VERSION_KEY = '$schemaVersion'

/** The fields of a KurrentDB recorded event the port needs; the client's recorded events have them all. */
export type LogEvent = {
  id: string
  type: string
  streamId: string
  revision: bigint
  created: Date
  data: unknown
  metadata: unknown
  /** Always set when reading $all; on stream reads only from KurrentDB 22.6. */
  position?: Position
}

export type AllLogEvent = LogEvent & { position: Position }

/** `'start'` is the client's START constant: kurrentdb.ts passes the result as the client's ReadPosition. */
export function toReadPosition(position: Position): Position | 'start' {
  return comparePositions(position, START) === 0 ? 'start' : { commit: position.commit, prepare: position.prepare }
}

export function toStoredMetadata(event: NewEvent): Record<string, unknown> {
  return { ...event.metadata, [SCHEMA_VERSION_KEY]: event.schemaVersion ?? 1 }
}

export function splitMetadata(stored: unknown): { metadata: EventMetadata; schemaVersion: number } {
  // Events written by other tools may carry no metadata, or bytes that are not a JSON object.
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored) || stored instanceof Uint8Array) {
    return { metadata: {}, schemaVersion: 1 }
  }
  const { [SCHEMA_VERSION_KEY]: version, ...metadata } = stored as Record<string, unknown>
  return { metadata, schemaVersion: typeof version === 'number' && Number.isInteger(version) && version >= 1 ? version : 1 }
}

export function toRecordedEvent(event: LogEvent): RecordedEvent {
  if (!event.position) {
    throw new Error(`Expected KurrentDB to report the $all position of event ${event.id} in ${event.streamId} (it does from version 22.6)`)
  }
  const { metadata, schemaVersion } = splitMetadata(event.metadata)
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata,
    schemaVersion,
    streamName: event.streamId,
    revision: event.revision,
    position: { commit: event.position.commit, prepare: event.position.prepare },
    createdAt: event.created,
  }
}

/** The client reports `'no_stream'` or a revision; older servers sent -1 for a missing stream. */
export function toActualRevision(actual: unknown): WrongExpectedRevisionError['actual'] {
  if (typeof actual === 'bigint') return actual < 0n ? 'no_stream' : actual
  return actual === 'no_stream' ? 'no_stream' : 'unknown'
}

/** System events (`$`-prefixed types: stats, metadata, links) never leave the adapter. */
export function isWanted(type: string, eventTypes?: readonly string[]): boolean {
  return !type.startsWith('$') && (!eventTypes || eventTypes.includes(type))
}

/** A server-side filter matching exactly these types; prefixes would also match longer names. */
export function eventTypesRegex(eventTypes: readonly string[]): string {
  return `^(?:${eventTypes.map((type) => type.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`
}

/**
 * One readAll page from events read from `after` inclusively (KurrentDB's fromPosition is inclusive,
 * the port's `after` exclusive), asked for `maxCount + 1` so that skipping `after` still fills a page.
 */
export function toReadAllPage(read: readonly AllLogEvent[], after: Position, maxCount: number, eventTypes?: readonly string[]): ReadAllPage {
  const scanned = read.filter((e) => comparePositions(e.position, after) > 0).slice(0, maxCount)
  const last = scanned.at(-1)?.position
  return {
    events: scanned.filter((e) => isWanted(e.type, eventTypes)).map(toRecordedEvent),
    scannedTo: last ? { commit: last.commit, prepare: last.prepare } : after,
    isEnd: read.length <= maxCount,
    // An acknowledged append is readable at once: there is no visibility horizon to wait behind.
    moreHidden: false,
  }
}
