import type { Test } from 'tap'
import type { Decider, DomainEvent } from '../../src/commands/decider.ts'
import { fold } from '../../src/commands/decider.ts'

/**
 * Decider specifications with no database: given past events, when a command, then these new
 * events (or this rejection).
 *
 *   spec(t, decider).given([created]).when(rename).then([renamed])
 */
export function spec<Command, State, Event extends DomainEvent>(t: Test, decider: Decider<Command, State, Event>) {
  return {
    given: (history: readonly Event[]) => ({
      when: (command: Command) => {
        const decide = () => decider.decide(command, fold(decider, history))
        return {
          then: (expected: readonly Event[], message = 'decides the expected events') => t.same(decide(), expected, message),
          thenRejects: (expected: new (...args: any[]) => Error, details?: object) => {
            try {
              decide()
              t.fail(`expected a rejection with ${expected.name}`)
            } catch (error) {
              t.type(error, expected)
              if (details) t.match(error, details)
            }
          },
        }
      },
    }),
  }
}
