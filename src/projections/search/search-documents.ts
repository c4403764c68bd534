import type { StreamCategory } from '../../commands/streams.ts'
import type { VisibleKind } from '../../visibility/policy.ts'

/**
 * What global search knows of a kind of record, declared in its module's manifest (`search`): which
 * events keep its document, which fields it reads from them, and how those fields become the
 * document (what the palette shows and what is matched). The answer's `type` is the kind, as the
 * original's search answers it (it has no tasks; cases, its tickets, are not built here yet).
 */
export type Fields = Record<string, unknown>

/** A document's derived text: shown (title, subtitle) and matched (names: weight A and trigrams; terms: weight B). */
export type DocumentText = { title: string; subtitle: string; names: string; terms: string }

export type SearchKindSpec = {
  /** The answer's `type`, and the name of the kind's partition (`search_documents_<kind>`). */
  kind: string
  /** Where its hits stand among equal scores (and its partition among the tables): the palette's order, leads first. */
  order: number
  /**
   * Its document's version: 0 for the kinds search began with; a kind that joins later starts at 1,
   * and each change of its document (keys, text) adds 1. The search projector's version adds them
   * up, so a kind that joins or changes rebuilds the documents without an edit of search's files.
   */
  version: number
  streams: StreamCategory
  events: { created: string; updated?: string; deleted?: string }
  /** How its `updated` event records an edit: the new values of the changed fields (`flat`), or each one's {from, to} under `changes` (`fromTo`). */
  changes: 'flat' | 'fromTo'
  /** Other events that edit the document (a deal's stage move), each with the fields it changes. */
  alsoUpdatedBy?: Readonly<Record<string, (data: Fields) => Fields>>
  /** The fields the document is derived from (a change to any other field changes nothing here). */
  keys: readonly string[]
  /** Who may see a document: its record kind's rule in the visibility policy, as in its list. */
  visibility: VisibleKind
  document(fields: Fields): DocumentText
}

export const str = (value: unknown): string => (typeof value === 'string' ? value.trim() : '')
export const words = (...values: unknown[]): string => values.map(str).filter(Boolean).join(' ')
export const firstOf = (...values: unknown[]): string => values.map(str).find(Boolean) ?? ''
/** An email as itself and as its parts, so `acme` finds `jo@acme.com` (the parser keeps an email as one word). */
export const email = (value: unknown): string => words(value, str(value).replace(/[@.+_-]/g, ' '))

/** Only the fields a kind reads, from an event's data. */
export const pick = (spec: SearchKindSpec, data: Fields): Fields => Object.fromEntries(spec.keys.filter((key) => key in data).map((key) => [key, data[key]]))

/** The fields an edit of the document's record changed, as its event records them. */
export function changesOf(spec: SearchKindSpec, type: string, data: Fields): Fields {
  const also = spec.alsoUpdatedBy?.[type]
  if (also) return also(data)
  if (spec.changes === 'fromTo') return Object.fromEntries(Object.entries(data.changes as Record<string, { to: unknown }>).map(([key, change]) => [key, change.to]))
  return data
}

/** The kinds the manifests declare, in the palette's order. */
export const searchKindsOf = (declared: readonly (SearchKindSpec | undefined)[]): SearchKindSpec[] => declared.filter((spec): spec is SearchKindSpec => spec !== undefined).sort((a, b) => a.order - b.order)
