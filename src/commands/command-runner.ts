import type { Decider, DomainEvent } from './decider.ts'
import type { CommandInput, CommandResult, Companion } from './handle-command.ts'

/** Runs one command on one stream with the caller's metadata already attached (see command-session.ts). */
export type CommandRunner = <Command, State, Event extends DomainEvent>(
  decider: Decider<Command, State, Event>,
  streamName: string,
  command: CommandInput<Command>,
  options?: { ifRevision?: bigint; expectNew?: boolean; also?: readonly Companion[]; maxRetries?: number },
) => Promise<CommandResult<State, Event>>
