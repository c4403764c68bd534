import type { Decider } from '../../src/commands/decider.ts'
import { NotFoundError, ValidationError } from '../../src/errors.ts'

/** A tiny aggregate for exercising the command plumbing: a named tab that takes deposits. */
export type TabEvent = { type: 'TabOpened'; data: { name: string } } | { type: 'TabRenamed'; data: { name: string } } | { type: 'Deposited'; data: { cents: number } }
export type TabCommand = { type: 'Open'; name: string } | { type: 'Rename'; name: string } | { type: 'Deposit'; cents: number }
export type TabState = { open: boolean; name: string; balance: number }

export const tabDecider: Decider<TabCommand, TabState, TabEvent> = {
  initialState: () => ({ open: false, name: '', balance: 0 }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'TabOpened':
        return { ...state, open: true, name: event.data.name }
      case 'TabRenamed':
        return { ...state, name: event.data.name }
      case 'Deposited':
        return { ...state, balance: state.balance + event.data.cents }
    }
  },
  decide: (command, state) => {
    if (command.type === 'Open') {
      if (!command.name.trim()) throw new ValidationError({ name: ['This field may not be blank.'] })
      return state.open ? [] : [{ type: 'TabOpened', data: { name: command.name } }]
    }
    if (!state.open) throw new NotFoundError()
    if (command.type === 'Rename') return command.name === state.name ? [] : [{ type: 'TabRenamed', data: { name: command.name } }]
    if (command.cents <= 0) throw new ValidationError({ cents: ['Ensure this value is greater than 0.'] })
    return [{ type: 'Deposited', data: { cents: command.cents } }]
  },
}
