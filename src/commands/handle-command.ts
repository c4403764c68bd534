import { ConflictError, PreconditionFailedError } from '../errors.ts'
import { WrongExpectedRevisionError } from '../eventstore/event-store.ts'
import type { EventMetadata, EventStore, Position, RecordedEvent, StreamGuard } from '../eventstore/event-store.ts'
import { currentVersion, decodeEvent } from '../events/versions.ts'
import { fold } from './decider.ts'
import type { Decider, DomainEvent } from './decider.ts'

export type CommandOptions<Event extends DomainEvent> = {
  /** Who and why: actor, organization, request and correlation ids. */
  metadata: EventMetadata
  /** Turns a stored event (possibly of an older schema version) into the decider's event type. */
  decode?: (recorded: RecordedEvent) => Event
  /** Schema version written with each new event. */
  schemaVersion?: (event: Event) => number
  /** Retries after a concurrent writer got in first; the decision is re-made on fresh state. */
  maxRetries?: number
  /** The revision the client last read (HTTP If-Match): a stream now elsewhere is refused with 412, never retried. */
  ifRevision?: bigint
  /**
   * The stream is almost surely new (a fresh random id, a name's first claim): the first attempt
   * decides on the initial state without reading it and appends expecting no stream. If the stream
   * did exist, that append fails on its expected revision and the command is decided again on what
   * is stored, as after any concurrent writer, so the outcome is the same with one read fewer.
   */
  expectNew?: boolean
}

/**
 * A command whose facts come from other streams (a deal's pipeline): prepared again on every
 * attempt, with the guard those facts were read at, so the append fails if they changed meanwhile.
 */
export type PreparedCommand<Command> = { command: Command; guard?: StreamGuard }
export type CommandInput<Command> = Command | (() => Promise<PreparedCommand<Command>>)

export type CommandResult<State, Event> = {
  state: State
  events: readonly Event[]
  /** Position of the last appended event (wait for it to read your writes); null when nothing changed. */
  position: Position | null
}

// Older schema versions are upcast (events/versions.ts), so deciders fold current shapes only.
const asDomainEvent = (recorded: RecordedEvent) => decodeEvent(recorded)

/**
 * Load the stream, fold it, decide, append with the revision that was read. A concurrent append
 * makes the append fail on its expected revision; the whole decision is then retried on the new
 * state, so rules are always checked against what is really stored.
 */
export async function handleCommand<Command, State, Event extends DomainEvent>(
  store: EventStore,
  decider: Decider<Command, State, Event>,
  streamName: string,
  input: CommandInput<Command>,
  options: CommandOptions<Event>,
): Promise<CommandResult<State, Event>> {
  const decode = options.decode ?? (asDomainEvent as (r: RecordedEvent) => Event)
  const maxRetries = options.maxRetries ?? 3
  // The optimistic first attempt of `expectNew` is not a retry: a stream found to exist gets the usual ones.
  let optimistic = options.expectNew === true && options.ifRevision === undefined
  for (let attempt = optimistic ? -1 : 0; ; attempt++) {
    const { command, guard } = typeof input === 'function' ? await (input as () => Promise<PreparedCommand<Command>>)() : { command: input, guard: undefined }
    const guessed = optimistic
    optimistic = false
    const recorded = guessed ? [] : await store.readStream(streamName)
    const revision = recorded.at(-1)?.revision
    if (options.ifRevision !== undefined && revision !== options.ifRevision) throw new PreconditionFailedError(`${streamName} changed since revision ${options.ifRevision}; it is at ${revision ?? 'nothing'}`)
    const state = fold(decider, recorded.map(decode))
    let events: readonly Event[]
    try {
      events = decider.decide(command, state)
    } catch (error) {
      // A refusal of the guessed (empty) state is only believed once the stream has been read.
      if (guessed) continue
      throw error
    }
    if (events.length === 0) return { state, events, position: null }
    try {
      const appended = await store.appendToStream(
        streamName,
        events.map((e) => ({ type: e.type, data: e.data, metadata: options.metadata, schemaVersion: options.schemaVersion?.(e) ?? currentVersion(e.type) })),
        { expectedRevision: revision ?? 'no_stream', ...(guard && { guard }) },
      )
      return { state: events.reduce(decider.evolve, state), events, position: appended.position }
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error
      if (attempt >= maxRetries) throw new ConflictError(`${streamName} kept changing concurrently; retry the request`)
    }
  }
}
