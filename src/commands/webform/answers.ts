import { createHash } from 'node:crypto'
import { ValidationError } from '../../errors.ts'
import type { CaseInput } from '../case/case.ts'
import type { CasePriority } from '../case/fields.ts'
import type { ContactFields } from '../contact/contact.ts'
import type { LeadInput } from '../lead/lead.ts'
import type { Answers, ConsentRecord } from './submission.ts'
import { MAPPABLE_FIELDS } from './webform.ts'
import type { Consent, FieldType, FormField, MappableField } from './webform.ts'

/**
 * A submission's answers read against the form's fields (pure: the same body always reads the
 * same), and the record they describe. A body is what an HTML form posts: strings, a list where a
 * key repeats, `on` for a ticked box; JSON clients may send booleans and numbers.
 */

const MAX_LENGTH: Record<Exclude<FieldType, 'checkbox' | 'select'>, number> = { text: 255, email: 254, phone: 50, textarea: 5000 }
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const PHONE = /^\+?[0-9 ().\-/]{3,50}$/
const TICKED = new Set(['on', 'true', '1', 'yes'])
const UNTICKED = new Set(['', 'off', 'false', '0', 'no'])
/** The lead's description holds at most this much (the lead's own limit). */
const DESCRIPTION_MAX = 10_000

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim()
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return undefined
}

/** The refusal of a submission whose visitor did not tick the form's consent box. */
export const CONSENT_REFUSED: Readonly<Record<string, string[]>> = { consent: ['Agree to the terms shown to send this form.'] }

/** Whether a box was ticked: `true`, or what a browser or a hand-written form sends for it (`on`, `true`, `1`, `yes`). */
export const isTicked = (value: unknown): boolean => value === true || (typeof value === 'string' && TICKED.has(value.trim().toLowerCase()))

/** One field's answer, or the message that refuses it; undefined for a blank optional field. */
function readOne(field: FormField, value: unknown): { answer?: string | boolean; error?: string } {
  if (Array.isArray(value)) return { error: 'Expected one value.' }
  if (field.type === 'checkbox') {
    const text = typeof value === 'boolean' ? String(value) : (textOf(value) ?? '').toLowerCase()
    if (!TICKED.has(text) && !UNTICKED.has(text)) return { error: 'Expected a ticked (on, true) or unticked box.' }
    const ticked = TICKED.has(text)
    return field.required && !ticked ? { error: 'This box must be ticked.' } : { answer: ticked }
  }
  const text = value === undefined || value === null ? '' : textOf(value)
  if (text === undefined) return { error: 'Expected text.' }
  if (text === '') return field.required ? { error: 'This field is required.' } : {}
  if (field.type === 'select') return field.options.includes(text) ? { answer: text } : { error: `Expected one of: ${field.options.join(', ')}.` }
  if (text.length > MAX_LENGTH[field.type]) return { error: `At most ${MAX_LENGTH[field.type]} characters.` }
  if (field.type === 'email' && !EMAIL.test(text)) return { error: 'Enter a valid email address.' }
  if (field.type === 'phone' && !PHONE.test(text)) return { error: 'Enter a valid phone number.' }
  return { answer: text }
}

/** The answers to the form's fields (keys the form does not have are dropped); a 400 naming each refused field, with the form's own refusals (`also`) beside them. */
export function readAnswers(fields: readonly FormField[], body: Readonly<Record<string, unknown>>, also: Readonly<Record<string, string[]>> = {}): Answers {
  const answers: Answers = {}
  const errors: Record<string, string[]> = { ...also }
  for (const field of fields) {
    const { answer, error } = readOne(field, body[field.key])
    if (error) errors[field.key] = [error]
    else if (answer !== undefined) answers[field.key] = answer
  }
  if (Object.keys(errors).length) throw new ValidationError(errors)
  return answers
}

/** What a quarantined post said to the form's fields, kept as sent (cut to size) so a person can judge it: nothing is checked, nothing dropped but other keys. */
export function rawAnswers(fields: readonly FormField[], body: Readonly<Record<string, unknown>>): Answers {
  const answers: Answers = {}
  for (const field of fields) {
    const value = Array.isArray(body[field.key]) ? (body[field.key] as unknown[])[0] : body[field.key]
    if (typeof value === 'boolean') answers[field.key] = value
    else if (typeof value === 'string' || typeof value === 'number') answers[field.key] = String(value).slice(0, MAX_LENGTH.textarea)
  }
  return answers
}

const shown = (answer: string | boolean) => (answer === true ? 'Yes' : answer === false ? 'No' : answer)

export type MappedAnswers = { mapped: Partial<Record<MappableField, string>>; description: string | null }

/**
 * What the answers fill on the record: mapped answers their fields; the others are written into its
 * description as "Label: answer" lines, after the mapped description, so nothing the visitor said is lost.
 */
export function mappedAnswers(fields: readonly FormField[], answers: Answers): MappedAnswers {
  const mapped: Partial<Record<MappableField, string>> = {}
  const lines: string[] = []
  for (const field of fields) {
    const answer = answers[field.key]
    if (answer === undefined) continue
    if (field.maps_to && typeof answer === 'string') mapped[field.maps_to] = answer
    else lines.push(`${field.label}: ${shown(answer)}`)
  }
  const description = [mapped.description, lines.join('\n')].filter(Boolean).join('\n\n').slice(0, DESCRIPTION_MAX)
  return { mapped, description: description || null }
}

/** The lead the answers describe, with no creator and source `other`. */
export function leadInputOf({ mapped, description }: MappedAnswers, assignedTo: readonly string[]): LeadInput {
  return { ...pick(mapped, MAPPABLE_FIELDS.lead), description, source: 'other', assigned_to: [...assignedTo], custom: { cfFields: {} } }
}

/** The contact the answers describe (a contact form's, or a case's submitter: `assignedTo` empty). */
export function contactInputOf({ mapped, description }: MappedAnswers, assignedTo: readonly string[]): Partial<ContactFields> {
  return { ...pick(mapped, MAPPABLE_FIELDS.contact), description, assigned_to: [...assignedTo] }
}

/** The case the answers describe (its submitter's contact apart). The design allows a priority only as a select of case priorities. */
export function caseInputOf({ mapped, description }: MappedAnswers, assignedTo: readonly string[]): CaseInput {
  return { name: mapped.name ?? '', description, ...(mapped.priority && { priority: mapped.priority as CasePriority }), assigned_to: [...assignedTo], custom: { cfFields: {} } }
}

function pick<K extends string>(mapped: Partial<Record<MappableField, string>>, keys: readonly K[]): Partial<Record<K, string>> {
  return Object.fromEntries(keys.flatMap((key) => (key in mapped && key !== 'description' ? [[key, mapped[key as unknown as MappableField]]] : []))) as Partial<Record<K, string>>
}

/** The consent a submission records: which wording (its hash and version) for what purpose, on what legal basis. */
export const consentRecordOf = (consent: Consent): ConsentRecord => ({
  purpose: consent.purpose,
  legal_basis: consent.legal_basis,
  text_sha256: createHash('sha256').update(consent.text).digest('hex'),
  version: consent.version,
})
