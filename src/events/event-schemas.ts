import { z } from 'zod'
import { STAGE_KINDS } from '../commands/pipeline/stage-rules.ts'

/**
 * What a module declares of each of its event types (src/modules/<module>.ts `events`): the stream
 * category it is written to, what it means, and a zod schema of its `data` at the current version
 * (versions.ts). The catalogue (catalogue.ts) is every module's declarations.
 */
export type EventDeclaration = Readonly<{
  stream: string
  description: string
  data: z.ZodType
  /**
   * Its personal fields (issue 31, docs/personal-data.md), as paths into `data` (`email`,
   * `changes.email.to`): names, emails, phones, addresses, free text about a person. The event
   * store seals them under the data key of the event's subject (src/privacy/). `[]` says the type
   * holds none; every type must say (test/events/catalogue.test.ts).
   */
  personal?: readonly string[]
  /**
   * Whose personal data the fields are: the subject's stream name (`contact-<id>`), or undefined
   * when this event's fields concern no person. Absent: the event's own stream is the subject.
   */
  subject?: (streamName: string, data: Record<string, unknown>) => string | undefined
}>

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
/** Per declared type: nothing when its schema's data is exactly the event's TypeScript data (both ways); otherwise a `data` that no schema is, so the declaration fails to compile. */
type InStep<E extends { type: string; data: unknown }, D> = {
  [T in E['type'] & keyof D]: D[T] extends { data: infer S extends z.ZodType } ? (Same<Extract<E, { type: T }>['data'], z.output<S>> extends true ? unknown : { data: `drifted from the ${T} event's type` }) : never
}

/**
 * A module's event declarations, checked against its event union `E` when compiled: each of its
 * types declared, no other, and each schema's data exactly the TypeScript data the decider writes
 * and folds. `eventsOf<TagEvent>()({ TagCreated: { … }, … })`.
 */
export const eventsOf =
  <E extends { type: string; data: unknown }>() =>
  <const D extends { [T in E['type']]: EventDeclaration }>(declarations: D & { [K in Exclude<keyof D, E['type']>]: never } & InStep<E, D>): Readonly<Record<string, EventDeclaration>> =>
    declarations

// Building blocks. Ids are uuids in practice; the schemas only ask for a non-empty string.
export const Id = z.string().min(1)
export const At = z.iso.datetime({ offset: true }).describe('When it happened (ISO 8601)')
export const By = Id.nullable().describe('Profile id of the caller; null for the organization API key or the system')
export const Day = z.iso.date()
export const Decimal = z.string().regex(/^\d+(\.\d+)?$/).describe('A non-negative decimal as a string (no floating point)')
export const Ids = z.array(Id)
export const CustomValues = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe('Custom field values by key')
export const at = { at: At }
/** Free text fields, null when not given. */
export const texts = <K extends string>(...keys: K[]) => Object.fromEntries(keys.map((key) => [key, z.string().nullable()])) as { [P in K]: z.ZodNullable<z.ZodString> }

/**
 * The declarations of a module whose events hold no personal data (`personal: []` for each): records
 * of a business (accounts, deals, tasks, settings), whose free text is about the business. What
 * concerns a person is written on the person's record (a contact, a lead), which seals it.
 */
export const noPersonalData = (declarations: Readonly<Record<string, EventDeclaration>>): Readonly<Record<string, EventDeclaration>> =>
  Object.fromEntries(Object.entries(declarations).map(([type, declaration]) => [type, { ...declaration, personal: declaration.personal ?? [] }]))

/** The personal paths of an "only what changed" event (`changesOf`): each field's value before and after. */
export const changedPaths = (...fields: string[]): string[] => fields.flatMap((field) => [`changes.${field}.from`, `changes.${field}.to`])

/** `{ <field>?: { from, to } }` for each field of `shape`: the "only what changed" events. */
export function changesOf<Shape extends z.ZodRawShape>(shape: Shape) {
  const entries = Object.entries(shape).map(([key, schema]) => [key, z.strictObject({ from: schema, to: schema }).optional()])
  return z.strictObject(Object.fromEntries(entries) as { [K in keyof Shape]: z.ZodOptional<z.ZodObject<{ from: Shape[K]; to: Shape[K] }, z.core.$strict>> })
}

/** Where a card sits: a stage of a pipeline (deals, leads, tasks). */
export const placementShape = { pipeline_id: Id, stage: z.string(), stage_id: Id, stage_kind: z.enum(STAGE_KINDS) }
export const Placement = z.strictObject(placementShape)
const attachmentShape = { attachment_id: Id, file_name: z.string(), content_type: z.string(), size: z.number().int().min(0), storage_key: z.string() }

/** The comment and attachment events of a record's own stream: `<Prefix>CommentAdded` … (commands/notes.ts). */
const noteData = {
  CommentAdded: z.strictObject({ comment_id: Id, comment: z.string(), by: By, mentions: Ids.optional().describe('The profiles its `@name`s named when it was written; absent when none'), internal: z.literal(true).optional().describe('An internal note, for the team only (cases); absent on a public comment'), ...at }),
  CommentEdited: z.strictObject({ comment_id: Id, comment: z.string(), ...at }),
  CommentDeleted: z.strictObject({ comment_id: Id, ...at }),
  AttachmentAdded: z.strictObject({ ...attachmentShape, by: By, ...at }),
  AttachmentRemoved: z.strictObject({ attachment_id: Id, ...at }),
}
type NoteSuffix = keyof typeof noteData
const noteMeanings: Record<NoteSuffix, (record: string) => string> = {
  CommentAdded: (record) => `A comment was added to a ${record}.`,
  CommentEdited: (record) => `A ${record}'s comment was edited by its author or an admin.`,
  CommentDeleted: (record) => `A ${record}'s comment was removed.`,
  AttachmentAdded: (record) => `A file was attached to a ${record} (\`storage_key\` names it in the file store; the bytes never enter the log).`,
  AttachmentRemoved: (record) => `A ${record}'s attachment was removed.`,
}
/** A person's record's notes are about the person: the comment's text and the file's name are personal. */
const personalNotes: Record<NoteSuffix, readonly string[]> = { CommentAdded: ['comment'], CommentEdited: ['comment'], CommentDeleted: [], AttachmentAdded: ['file_name'], AttachmentRemoved: [] }
/**
 * The definitions of one record module's note events, e.g. `LeadCommentAdded` on `lead-<id>`;
 * `ofAPerson` for a person's record (a contact, a lead), whose notes hold personal data.
 */
export function noteDefinitions<P extends string>(prefix: P, stream: string, record: string, options: { ofAPerson?: boolean } = {}) {
  const entries = (Object.keys(noteData) as NoteSuffix[]).map((suffix) => [`${prefix}${suffix}`, { stream, description: noteMeanings[suffix](record), data: noteData[suffix], personal: options.ofAPerson ? personalNotes[suffix] : [] }])
  return Object.fromEntries(entries) as { [S in NoteSuffix as `${P}${S}`]: { stream: string; description: string; data: (typeof noteData)[S]; personal: readonly string[] } }
}
