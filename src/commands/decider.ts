/**
 * The shape every aggregate follows (Emmett/Equinox): events are the storage contract, `evolve`
 * folds them into state, `decide` turns a command and the current state into new events or throws
 * a DomainError (a rejection). Both are pure: time, new ids and looked-up facts arrive in the command.
 * A command whose outcome already holds decides no events (idempotent).
 */
export type DomainEvent = { type: string; data: unknown }

export type Decider<Command, State, Event extends DomainEvent> = {
  initialState: () => State
  evolve: (state: State, event: Event) => State
  decide: (command: Command, state: State) => readonly Event[]
}

export function fold<State, Event extends DomainEvent>(decider: Pick<Decider<unknown, State, Event>, 'initialState' | 'evolve'>, events: readonly Event[]): State {
  return events.reduce(decider.evolve, decider.initialState())
}
