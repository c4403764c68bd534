import { createCipheriv, createDecipheriv } from 'node:crypto'
import { pooledRandomBytes } from './pooled-random.ts'

/**
 * Sealing one event's personal fields (issue 31): the string values at its declared paths are taken
 * out of `data` and stored together as one AES-256-GCM box under the subject's data key, in
 * `data.$sealed` with the paths (field names are not personal). Everything else stays in clear.
 * The subject's stream name is the box's additional data, so a box copied onto another person's
 * event does not open. Only strings are sealed: a null says nothing about a person.
 */
export const SEALED = '$sealed'

/**
 * What a sealed field reads as once its subject's key is destroyed (docs/personal-data.md): a typed
 * tombstone in every read of the log (history, the event feed, SSE, webhooks, exports). Folds and
 * read models see it as READ_MODEL_ERASED instead (presentErased), so the shapes they serve, which
 * the apps cast to strings, keep their types.
 */
export const ERASED = Object.freeze({ erased: true as const })
export type Tombstone = typeof ERASED

/** An erased field as the read models and folds hold it: the apps cast these fields to String (some not even nullable). */
export const READ_MODEL_ERASED = ''

export const isTombstone = (value: unknown): value is Tombstone => isObject(value) && value.erased === true && Object.keys(value).length === 1

/** The paths of an unsealed event's data that read as tombstones: a mark on the object itself, invisible to JSON and lost on copy. */
const ERASED_PATHS = Symbol('erasedPaths')

type SealedBox = { fields: string[]; box: string }
type Data = Record<string, unknown>

const ALGORITHM = 'aes-256-gcm'
const IV_BYTES = 12
const TAG_BYTES = 16

export const newDataKey = (): Buffer => pooledRandomBytes(32)

function isObject(value: unknown): value is Data {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A declared path split once per declaration, not once per event (sealing is on every create's path). */
type Path = { path: string; parts: readonly string[]; each: boolean }
const compiledPaths = new WeakMap<readonly string[], readonly Path[]>()
function compiled(fields: readonly string[]): readonly Path[] {
  let paths = compiledPaths.get(fields)
  if (!paths) {
    paths = fields.map((path) => (path.endsWith('.*') ? { path, parts: path.slice(0, -2).split('.'), each: true } : { path, parts: path.split('.'), each: false }))
    compiledPaths.set(fields, paths)
  }
  return paths
}

function valueAtParts(data: Data, parts: readonly string[]): unknown {
  let at: unknown = data
  for (const part of parts) {
    if (!isObject(at)) return undefined
    at = at[part]
  }
  return at
}

/** Sets the value at `path`, making the objects on the way (an unsealed `changes.email.to` whose `from` was null). */
function setAt(data: Data, path: string, value: unknown): void {
  const parts = path.split('.')
  let at = data
  for (const part of parts.slice(0, -1)) {
    if (!isObject(at[part])) at[part] = {}
    at = at[part] as Data
  }
  at[parts.at(-1)!] = value
}

/**
 * `data` without the values at `paths`, the caller's object left alone: the objects on the paths
 * are copied, the rest is shared. Cheaper than a deep copy and `delete`, which sealing paid on
 * every create (`delete` also turns an object into a slow dictionary for the serializer).
 */
function withoutPaths(data: Data, paths: readonly string[]): Data {
  const dropped = new Set<string>()
  const below = new Map<string, string[]>()
  for (const path of paths) {
    const dot = path.indexOf('.')
    if (dot < 0) dropped.add(path)
    else below.set(path.slice(0, dot), [...(below.get(path.slice(0, dot)) ?? []), path.slice(dot + 1)])
  }
  const copy: Data = {}
  for (const [name, value] of Object.entries(data)) {
    if (dropped.has(name)) continue
    const inner = below.get(name)
    copy[name] = inner && isObject(value) ? withoutPaths(value, inner) : value
  }
  return copy
}

/**
 * A path ending in `.*` stands for each field of the object there (a web form's answers, keyed by
 * the form's own fields): the concrete paths that `data` holds, with their values.
 */
function concreteValues(data: Data, fields: readonly string[]): [string, unknown][] {
  const found: [string, unknown][] = []
  for (const { path, parts, each } of compiled(fields)) {
    const value = valueAtParts(data, parts)
    if (!each) found.push([path, value])
    else if (isObject(value)) for (const key of Object.keys(value)) found.push([`${path.slice(0, -1)}${key}`, value[key]])
  }
  return found
}

/** The paths and values of `fields` that hold a string in `data`: what there is to seal. */
const presentValues = (data: unknown, fields: readonly string[]): [string, unknown][] => (isObject(data) ? concreteValues(data, fields).filter(([, value]) => typeof value === 'string') : [])

/** The paths of `fields` that hold a string in `data`. */
export const presentFields = (data: unknown, fields: readonly string[]): string[] => presentValues(data, fields).map(([path]) => path)

/** The values of the personal fields `data` holds, by path (a subject-access export). */
export const personalValues = (data: unknown, fields: readonly string[]): Record<string, unknown> => Object.fromEntries(presentValues(data, fields))

/** The paths of `fields` that hold a string or a tombstone (written for a person already erased). */
const erasableFields = (data: Data, fields: readonly string[]): string[] =>
  concreteValues(data, fields).flatMap(([path, value]) => (typeof value === 'string' || isTombstone(value) ? [path] : []))

/**
 * `data` as folds and read models take it: each tombstone of an unsealed event replaced by
 * READ_MODEL_ERASED, so a fold, a projection's columns and the API's string fields keep their
 * types (docs/personal-data.md). Data without tombstones is answered as it is, at no cost.
 */
export function presentErased<T>(data: T): T {
  const paths = isObject(data) ? (data as Data & { [ERASED_PATHS]?: string[] })[ERASED_PATHS] : undefined
  if (!paths) return data
  const copy = structuredClone(data) as Data
  for (const path of paths) setAt(copy, path, READ_MODEL_ERASED)
  return copy as T
}

/** Marks `data`'s tombstones for presentErased. */
function markErased(data: Data, paths: readonly string[]): Data {
  if (paths.length) Object.defineProperty(data, ERASED_PATHS, { value: paths, enumerable: false })
  return data
}

/**
 * `data` with its personal fields sealed under `key`; with `key` null (the subject was erased) the
 * values are dropped and read as ERASED. The caller's object is not changed.
 */
export function sealData(data: unknown, fields: readonly string[], key: Buffer | null, subject: string): unknown {
  const found = presentValues(data, fields)
  if (found.length === 0) return data
  const present = found.map(([path]) => path)
  const copy = withoutPaths(data as Data, present)
  if (key === null) {
    for (const path of present) setAt(copy, path, { ...ERASED })
    return copy
  }
  const values = found.map(([, value]) => value)
  const iv = pooledRandomBytes(IV_BYTES)
  const cipher = createCipheriv(ALGORITHM, key, iv).setAAD(Buffer.from(subject))
  const body = Buffer.concat([cipher.update(JSON.stringify(values), 'utf8'), cipher.final()])
  copy[SEALED] = { fields: present, box: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64') } satisfies SealedBox
  return copy
}

const sealedBoxOf = (data: unknown): SealedBox | undefined => (isObject(data) && isObject(data[SEALED]) ? (data[SEALED] as SealedBox) : undefined)

function open(box: string, key: Buffer, subject: string): unknown[] | undefined {
  try {
    const bytes = Buffer.from(box, 'base64')
    const decipher = createDecipheriv(ALGORITHM, key, bytes.subarray(0, IV_BYTES)).setAAD(Buffer.from(subject))
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
    const values: unknown = JSON.parse(Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8'))
    return Array.isArray(values) ? values : undefined
  } catch {
    return undefined
  }
}

/**
 * `data` as it was before sealing, with the subject's `key` (undefined: none was ever made). With
 * `key` null (destroyed) every sealed field, and every plain personal field of `fields` (an event
 * written before sealing began), reads as a tombstone, marked for presentErased. Never throws: a
 * box that does not open reads as erased too.
 */
export function unsealData(data: unknown, fields: readonly string[], key: Buffer | null | undefined, subject: string): unknown {
  const sealed = sealedBoxOf(data)
  const erased = key === null
  if (!sealed && !erased) return data
  const copy = structuredClone(data) as Data
  const tombstones: string[] = []
  if (sealed) {
    delete copy[SEALED]
    const values = key ? open(sealed.box, key, subject) : undefined
    sealed.fields.forEach((path, i) => {
      setAt(copy, path, values ? values[i] : { ...ERASED })
      if (!values) tombstones.push(path)
    })
  }
  if (erased) {
    for (const path of erasableFields(copy, fields)) {
      setAt(copy, path, { ...ERASED })
      if (!tombstones.includes(path)) tombstones.push(path)
    }
  }
  return markErased(copy, tombstones)
}
