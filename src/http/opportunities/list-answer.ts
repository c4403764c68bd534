import type { z } from 'zod'
import { currencyChoices, leadSourceChoices } from '../../commands/opportunity/enums.ts'
import type { Totals } from '../../projections/opportunity/queries.ts'
import { stampedCache } from '../../projections/kernel/stamped-cache.ts'
import { compileFast } from '../kernel/serializer.ts'
import { DealList } from './schemas.ts'

type Answer = z.infer<typeof DealList>
/** A part of the answer as UTF-8 JSON bytes, written once when it is kept (stamped-cache.ts); with its value only where answers are checked (tests), to keep memory to the bytes. */
export type Written<T> = { text: Buffer; value?: T }

/** The fast serializer of one field of the list answer: the same JSON Schema fragment the whole answer's serializer is compiled from. */
const writerOf = <K extends keyof Answer>(key: K) => {
  let write: ((data: unknown) => string) | undefined
  return (value: Answer[K]): string => (write ??= compileFast(DealList.shape[key])!)(value)
}

export const writeAccounts = writerOf('accounts_list')
export const writeContacts = writerOf('contacts_list')
export const writeTags = writerOf('tags')
export const writeStages = writerOf('stage')
const writeTotals = writerOf('totals')
const writeOpportunities = writerOf('opportunities')
const writeInts = writerOf('page_number')

// The choices are constants: written once per process.
let choices: { leadSource: Written<Answer['lead_source']>; currency: Written<Answer['currency']> } | undefined
const choicesOf = () => (choices ??= { leadSource: written(leadSourceChoices(), writerOf('lead_source'), true), currency: written(currencyChoices(), writerOf('currency'), true) })
export const written = <T>(value: T, write: (value: T) => string, withValue: boolean): Written<T> => ({ text: Buffer.from(write(value)), value: withValue ? value : undefined })

/**
 * Every page number of the set (§4.3: 10,000 of them for 100k deals at 10 a page, ~49 kB of a
 * 70 kB answer), written once per (count, page size): they change only when the count does.
 */
const pageNumberTexts = stampedCache(16)
const pageNumbers = (count: number, limit: number) => (limit > 0 ? Array.from({ length: Math.ceil(count / limit) }, (_, i) => i + 1) : [])
const pageNumberText = (count: number, limit: number) => pageNumberTexts.get(`${count} ${limit}`, 'pages', 0, async () => ({ value: Buffer.from(writeInts(pageNumbers(count, limit))) }))

export type ListParts = {
  count: number
  totals: Totals
  offset: number
  limit: number
  opportunities: Answer['opportunities']
  accounts: Written<Answer['accounts_list']>
  contacts: Written<Answer['contacts_list']>
  tags: Written<Answer['tags']>
  stages: Written<Answer['stage']>
}

const COMMA_CONTACTS = Buffer.from(',"contacts_list":')
const COMMA_TAGS = Buffer.from(',"tags":')
const COMMA_STAGE = Buffer.from(',"stage":')
const COMMA_LEAD_SOURCE = Buffer.from(',"lead_source":')
const COMMA_CURRENCY = Buffer.from(',"currency":')
const CLOSE = Buffer.from('}')
let writeList: ((answer: unknown) => string) | undefined

/**
 * The deal list answer as JSON bytes: what changes per request written now, what is kept (pick lists,
 * page numbers, choices) spliced in as encoded when kept, in the schema's field order. Bytes, not a
 * string: a string spliced of 70 kB is flattened and measured (Content-Length) and then encoded
 * again by the reply, a third of the answer's CPU before (the currency names are not ASCII). With `check`
 * (tests) the answer is also built as an object, parsed by the zod schema and written by the
 * serializer every other answer uses; the two texts must be the same bytes.
 */
export async function listJson(parts: ListParts, check: boolean): Promise<Buffer> {
  const { count, totals, offset, limit, opportunities, accounts, contacts, tags, stages } = parts
  const pages = await pageNumberText(count, limit)
  const { leadSource, currency } = choicesOf()
  const bytes = Buffer.concat([
    Buffer.from(`{"opportunities_count":${count},"totals":${writeTotals(totals)},"offset":${offset},"per_page":${limit},"page_number":`), pages,
    Buffer.from(`,"opportunities":${writeOpportunities(opportunities)},"accounts_list":`), accounts.text,
    COMMA_CONTACTS, contacts.text, COMMA_TAGS, tags.text, COMMA_STAGE, stages.text, COMMA_LEAD_SOURCE, leadSource.text, COMMA_CURRENCY, currency.text, CLOSE,
  ])
  if (check) {
    const text = bytes.toString()
    const answer = DealList.parse({ opportunities_count: count, totals, offset, per_page: limit, page_number: pageNumbers(count, limit), opportunities, accounts_list: accounts.value, contacts_list: contacts.value, tags: tags.value, stage: stages.value, lead_source: leadSource.value, currency: currency.value })
    const expected = (writeList ??= compileFast(DealList)!)(answer)
    if (text !== expected) throw new Error(`The deal list's JSON differs from the serializer's:\n${text.slice(0, 2000)}\nexpected\n${expected.slice(0, 2000)}`)
  }
  return bytes
}
