import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * An organization's sample data: which records the packs applied to it created (one stream per
 * organization). It is what makes DELETE sample-data/ remove exactly what a pack created and
 * nothing a user made: the records are named here, by id, never guessed from a tag or a name.
 * The records themselves are created and deleted by their own modules' commands.
 */

export const SAMPLE_KINDS = ['account', 'contact', 'deal', 'lead', 'task'] as const
export type SampleKind = (typeof SAMPLE_KINDS)[number]
export type SampleRecord = { kind: SampleKind; id: string; name: string }
export type SkippedItem = { kind: SampleKind; name: string; reason: string }

// Events: the storage contract.
export type SampleDataEvent =
  | { type: 'SampleDataApplied'; data: { pack_id: string; pack_version: number; generation: number; records: SampleRecord[]; skipped: SkippedItem[]; by: string | null; at: string } }
  | { type: 'SampleDataCleared'; data: { deleted: SampleRecord[]; retained: SampleRecord[]; by: string | null; at: string } }

// Fold: how many applications there were (each numbers its records' ids) and the sample records still held.
export type SampleDataState = { applications: number; held: SampleRecord[] }

export const initialSampleDataState = (): SampleDataState => ({ applications: 0, held: [] })

export function evolveSampleData(state: SampleDataState, event: SampleDataEvent): SampleDataState {
  switch (event.type) {
    case 'SampleDataApplied':
      return { applications: state.applications + 1, held: [...state.held, ...event.data.records] }
    case 'SampleDataCleared':
      // Retained records stay held: a later clear deletes them once nothing real points at them any more.
      return { ...state, held: event.data.retained }
  }
}

export type SampleDataCommand =
  /** `generation`: the application the records were created for; a second run of the same one decides nothing. */
  | { type: 'RecordSampleData'; packId: string; packVersion: number; generation: number; records: SampleRecord[]; skipped: SkippedItem[]; actorId: string | null; at: string }
  | { type: 'RecordSampleDataCleared'; deleted: SampleRecord[]; retained: SampleRecord[]; actorId: string | null; at: string }

export function decideSampleData(command: SampleDataCommand, state: SampleDataState): SampleDataEvent[] {
  switch (command.type) {
    case 'RecordSampleData':
      if (command.generation !== state.applications || !command.records.length) return []
      return [{ type: 'SampleDataApplied', data: { pack_id: command.packId, pack_version: command.packVersion, generation: command.generation, records: command.records, skipped: command.skipped, by: command.actorId, at: command.at } }]
    case 'RecordSampleDataCleared':
      if (!state.held.length) return []
      return [{ type: 'SampleDataCleared', data: { deleted: command.deleted, retained: command.retained, by: command.actorId, at: command.at } }]
  }
}

export const sampleDataDecider: Decider<SampleDataCommand, SampleDataState, SampleDataEvent> = { initialState: initialSampleDataState, evolve: evolveSampleData, decide: decideSampleData }

export const sampleDataStreams = streamCategory('sample_data')
/** One stream per organization. */
export const sampleDataStream = sampleDataStreams.stream
