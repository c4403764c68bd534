import { NotFoundError } from '../../errors.ts'
import type { EventStore, RecordedEvent } from '../../eventstore/event-store.ts'
import { erasureStream } from './erasure.ts'
import type { ErasureEvent, SubjectErasedData } from './erasure.ts'

/** A person as the privacy routes name them: the kind (their stream category) and id. */
export type SubjectRef = { kind: string; id: string }

/** The person's stream, the subject their data key is named after (`contact-<id>`). */
export const subjectOf = ({ kind, id }: SubjectRef) => `${kind}-${id}`

/** The receipt of the person's erasure, if they were erased. */
export async function receiptOf(store: EventStore, subject: SubjectRef): Promise<SubjectErasedData | undefined> {
  const [event] = await store.readStream(erasureStream(subject.kind, subject.id), { maxCount: 1 })
  return event ? (event as unknown as ErasureEvent).data : undefined
}

const orgOf = (event: RecordedEvent | undefined) => event?.metadata.orgId ?? (event?.data as { org_id?: unknown } | undefined)?.org_id

/** The person's events; a person of another organization, or none, is not found. */
export async function eventsOfSubject(store: EventStore, orgId: string, subject: SubjectRef): Promise<RecordedEvent[]> {
  const events = await store.readStream(subjectOf(subject))
  if (events.length === 0 || orgOf(events[0]) !== orgId) throw new NotFoundError()
  return events
}
