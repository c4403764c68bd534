import { z } from 'zod'
import type { NameClaimEvent } from '../commands/name-claim.ts'
import { MODULES } from '../modules/modules.ts'
import { claimSubject } from '../commands/privacy/person-claims.ts'
import { Id, eventsOf } from './event-schemas.ts'
import type { EventDeclaration } from './event-schemas.ts'
import { currentVersion, upcast } from './versions.ts'

/**
 * The event catalogue (issue 8, "Event hygiene"): every stored event type with the stream category
 * it is written to, its current schema version (versions.ts) and a zod schema of its `data` at that
 * version. Each module declares its own in its manifest (src/modules/<module>.ts `events`, checked
 * against its event union when compiled); the name claims, which every module's unique names share,
 * are the command kernel's and declared here. Published as a JSON Schema document
 * (`eventCatalogueDocument`, served at GET /api/events/schema/).
 */

/** The command kernel's own events: unique-name claims (commands/name-claim.ts). */
const KERNEL_EVENTS = eventsOf<NameClaimEvent>()({
  // name_claim-<scope>-<org>-<hash>
  NameClaimed: { stream: 'name_claim', description: 'A unique name (per organization and scope, case-insensitive) was claimed by a record.', data: z.strictObject({ owner_id: Id, name: z.string() }), personal: ['name'], subject: claimSubject },
  NameReleased: { stream: 'name_claim', description: 'A claimed name was freed by its owner.', data: z.strictObject({ owner_id: Id }), personal: [] },
})

export type EventDefinition = Readonly<{ type: string; version: number } & EventDeclaration>

/** Every stored event type: the kernel's and every module's, each declared once. */
export const EVENT_CATALOGUE: readonly EventDefinition[] = [KERNEL_EVENTS, ...MODULES.map((module) => module.events ?? {})].flatMap((declarations) => Object.entries(declarations)).map(([type, definition]) => ({ type, version: currentVersion(type), ...definition }))

const byType = new Map(EVENT_CATALOGUE.map((definition) => [definition.type, definition]))

export const eventDefinition = (type: string): EventDefinition | undefined => byType.get(type)

/** A stored event's data, upcast to the current version and checked against its schema; an unknown type is a failure too. */
export function parseEventData(type: string, schemaVersion: number | undefined, data: unknown): z.ZodSafeParseResult<unknown> {
  const definition = byType.get(type)
  if (!definition) return z.never().safeParse(data, { error: () => `Unknown event type ${type}` })
  return definition.data.safeParse(upcast(type, schemaVersion, data))
}

export const EVENT_SCHEMA_ID = 'urn:crm:events'

/** Categories whose event types another category writes too: lead and task pipelines reuse the pipeline events (commands/pipeline/kinds.ts). */
const SHARING: Readonly<Record<string, readonly string[]>> = { pipeline: ['lead_pipeline', 'task_pipeline'] }
const streamPattern = (stream: string) => (SHARING[stream] ? `^(${[stream, ...SHARING[stream]].join('|')})-` : `^${stream}-`)

/**
 * The catalogue as one JSON Schema (2020-12) document: `$defs.<Type>` describes an event envelope
 * `{ type, stream, schema_version, data }` (other members, such as a feed's position, are allowed),
 * `oneOf` accepts any event of the catalogue. Each definition's `properties.schema_version.const`
 * is the current version and `properties.data` the JSON Schema of its data.
 */
export function eventCatalogueDocument() {
  const defs = Object.fromEntries(
    EVENT_CATALOGUE.map(({ type, stream, version, description, data }) => {
      const { $schema: _draft, ...schema } = z.toJSONSchema(data, { target: 'draft-2020-12' })
      const envelope = {
        title: type,
        description: `${description} Stream: \`${stream}-…\`; schema version ${version}.`,
        type: 'object',
        properties: {
          type: { const: type },
          stream: { type: 'string', pattern: streamPattern(stream) },
          schema_version: { const: version, description: 'Older versions are upcast to this one when read' },
          data: schema,
        },
        required: ['type', 'data'],
      }
      return [type, envelope]
    }),
  )
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: EVENT_SCHEMA_ID,
    title: 'CRM event catalogue',
    description: 'Every event type the CRM stores, at its current schema version. Events of older versions are upcast when read, so every reader sees these shapes.',
    oneOf: EVENT_CATALOGUE.map(({ type }) => ({ $ref: `#/$defs/${type}` })),
    $defs: defs,
  }
}
