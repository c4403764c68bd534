import { ConflictError, PreconditionFailedError } from '../errors.ts'
import { WrongExpectedRevisionError } from '../eventstore/event-store.ts'
import type { EventMetadata, EventStore, NewEvent, Position, RecordedEvent, StreamGuard, StreamWrite } from '../eventstore/event-store.ts'
import { currentVersion, foldedEvent } from '../events/versions.ts'
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
  /**
   * Commands on other streams decided in the same attempt and appended in the same append
   * (appendToStreams, one transaction on PostgreSQL): a name claim with the record that holds it, so
   * a failure between the two cannot leave one without the other. A refusal of any of them refuses
   * the whole; a concurrent change to any of them retries the whole decision.
   */
  also?: readonly Companion[]
}

/** A command on another stream that travels with the main one (see CommandOptions.also). */
export type Companion = {
  expectNew?: boolean
  /**
   * At each attempt: the command prepared afresh (facts re-read, e.g. a deal's pipeline), the
   * stream it is decided on (a name claim's comes from the store: claim-names.ts), how it decides
   * on that stream, and the guard of its facts; null when it has nothing to decide.
   */
  prepare(store: EventStore): Promise<PreparedCompanion | null>
}
export type PreparedCompanion = { streamName: string; decide(recorded: readonly RecordedEvent[]): readonly DomainEvent[]; guard?: StreamGuard }

/** A companion command for `decider` on `streamName`, prepared and decided on its stream as stored at each attempt. */
export function companion<Command, State, Event extends DomainEvent>(decider: Decider<Command, State, Event>, streamName: string, input: CommandInput<Command>, options: { expectNew?: boolean } = {}): Companion {
  return {
    expectNew: options.expectNew,
    async prepare() {
      const { command, guard } = await prepared(input)
      return { streamName, guard, decide: (recorded) => decider.decide(command, fold(decider, recorded.map((e) => asDomainEvent(e) as Event))) }
    },
  }
}

const prepared = async <Command>(input: CommandInput<Command>): Promise<PreparedCommand<Command>> =>
  typeof input === 'function' ? (input as () => Promise<PreparedCommand<Command>>)() : { command: input }

/**
 * A command whose facts come from other streams (a deal's pipeline): prepared again on every
 * attempt, with the guard those facts were read at, so the append fails if they changed meanwhile.
 */
export type PreparedCommand<Command> = {
  command: Command
  guard?: StreamGuard
  /**
   * Set when the facts came from an earlier read kept in memory (a cache): forgets them, so the
   * next prepare reads them again. Called when the guard's stream had moved, and when the command
   * was refused on them (a stage added elsewhere is not in the kept copy), to decide once more.
   */
  refresh?: () => void
}
export type CommandInput<Command> = Command | (() => Promise<PreparedCommand<Command>>)

export type CommandResult<State, Event> = {
  state: State
  events: readonly Event[]
  /** Position of the last appended event (wait for it to read your writes); null when nothing changed. */
  position: Position | null
  /** The types of every event appended, its companions' included: the read models a reader of this write waits for are those that apply them. */
  eventTypes: readonly string[]
}

// Older schema versions are upcast (events/versions.ts), so deciders fold current shapes only.
const asDomainEvent = (recorded: RecordedEvent) => foldedEvent(recorded)

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
    const { command, guard, refresh } = await prepared(input)
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
      // A refusal of the guessed (empty) state is only believed once the stream has been read, and
      // one on kept facts once they have been read again (without counting as a retry).
      if (guessed) continue
      if (refresh) {
        refresh()
        attempt--
        continue
      }
      throw error
    }
    let companions: Awaited<ReturnType<typeof decideCompanions>>
    try {
      companions = await decideCompanions(store, options.also ?? [], guessed, (e) => newEvent(e, options.metadata))
    } catch (error) {
      if (guessed) continue
      throw error
    }
    if (events.length === 0 && companions.writes.length === 0) return { state, events, position: null, eventTypes: [] }
    try {
      const own: StreamWrite[] = events.length ? [{ streamName, events: events.map((e) => newEvent(e, options.metadata, options.schemaVersion?.(e))), expectedRevision: revision ?? 'no_stream' }] : []
      const guards = [...(guard ? [guard] : []), ...companions.guards]
      const appended = companions.writes.length
        ? await store.appendToStreams([...companions.writes, ...own], { guards })
        : await store.appendToStream(streamName, own[0]!.events, { expectedRevision: own[0]!.expectedRevision, ...(guard && { guard }) })
      const eventTypes = [...companions.writes, ...own].flatMap((write) => write.events.map((e) => e.type))
      return { state: events.reduce(decider.evolve, state), events, position: appended.position, eventTypes }
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error
      if (error.streamName === guard?.streamName) refresh?.()
      if (attempt >= maxRetries) throw new ConflictError(`${streamName} kept changing concurrently; retry the request`)
    }
  }
}

function newEvent(event: DomainEvent, metadata: EventMetadata, schemaVersion = currentVersion(event.type)): NewEvent {
  return { type: event.type, data: event.data, metadata, schemaVersion }
}

/**
 * Each companion prepared and decided on its stream as stored (as new on an optimistic attempt,
 * when it expects to be): the writes it adds, and the guards of the facts it was decided on.
 */
async function decideCompanions(store: EventStore, companions: readonly Companion[], optimistic: boolean, toNew: (event: DomainEvent) => NewEvent): Promise<{ writes: StreamWrite[]; guards: StreamGuard[] }> {
  const writes: StreamWrite[] = []
  const guards: StreamGuard[] = []
  for (const one of companions) {
    const prepared = await one.prepare(store)
    if (!prepared) continue
    const { streamName, decide, guard } = prepared
    const recorded = optimistic && one.expectNew ? [] : await store.readStream(streamName)
    const events = decide(recorded)
    if (!events.length) continue
    writes.push({ streamName, events: events.map(toNew), expectedRevision: recorded.at(-1)?.revision ?? 'no_stream' })
    if (guard) guards.push(guard)
  }
  return { writes, guards }
}
