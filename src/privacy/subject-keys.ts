import { sql } from 'kysely'
import type { Db } from '../db/database.ts'
import type { NewSubjectKey } from '../eventstore/event-store.ts'
import type { KeyWrapping } from './master-key.ts'
import { newDataKey } from './seal.ts'

/**
 * The people's data keys (table subject_keys, migrations/…-subject-keys.ts), stored wrapped by the
 * master key (`wrapping`, master-key.ts) and cached unwrapped per process so that sealing costs a
 * query only for a subject this process has not met within the last minute, and none for a new
 * person on PostgreSQL, whose key the creating append stores itself (`propose`, `inEventDatabase`).
 * A destroyed key is cached as null. Another process that erases someone is heard of when the entry
 * expires (`ttlMs`); the process that erases drops its own entry at once.
 */
export type SubjectKeys = {
  /** Whether the events go to the keys' database, so that an append can store the keys it seals with (propose). */
  readonly inEventDatabase: boolean
  /** The keys to seal with, made for the subjects that have none; null for a destroyed one. */
  forSealing(subjects: readonly string[]): Promise<Map<string, Buffer | null>>
  /**
   * Fresh keys for subjects this process has not cached, for the append that seals with them to
   * store (NewSubjectKey): no query. Only for people the append creates; for one who has a key
   * already the append fails (SubjectKeyExistsError), and forSealing reads the stored key.
   */
  propose(subjects: readonly string[]): Map<string, { key: Buffer; stored: NewSubjectKey }>
  /** Caches the keys an append stored (propose) once it has committed. */
  stored(keys: ReadonlyMap<string, Buffer>): void
  /** The keys to unseal with: null for a destroyed one, absent for a subject that never had one. */
  forUnsealing(subjects: readonly string[]): Promise<Map<string, Buffer | null>>
  /** Destroys the subject's key (or records that it has none and may get none): what erasure does. */
  destroy(subject: string): Promise<void>
}

type Entry = { key: Buffer | null; at: number }
type Row = { subject: string; data_key: Buffer | null }

export type SubjectKeyOptions = {
  ttlMs?: number
  maxEntries?: number
  /** True only when the events go to the same PostgreSQL database as the keys (propose, makeOrRead); never for KurrentDB. */
  inEventDatabase?: boolean
}

export function subjectKeys(db: Db, wrapping: KeyWrapping, options: SubjectKeyOptions = {}): SubjectKeys {
  const ttlMs = options.ttlMs ?? 60_000
  const maxEntries = options.maxEntries ?? 50_000
  const cache = new Map<string, Entry>()

  const cached = (subject: string): Entry | undefined => {
    const entry = cache.get(subject)
    if (entry && Date.now() - entry.at < ttlMs) return entry
    if (entry) cache.delete(subject)
    return undefined
  }
  const remember = (subject: string, key: Buffer | null) => {
    // Oldest first out: a Map iterates in insertion order.
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!)
    cache.set(subject, { key, at: Date.now() })
  }
  const known = (subjects: readonly string[]) =>
    new Map(
      subjects.flatMap((subject) => {
        const entry = cached(subject)
        return entry ? [[subject, entry.key] as const] : []
      }),
    )

  const unwrapped = (rows: readonly Row[]): Row[] => rows.map((row) => (row.data_key ? { ...row, data_key: wrapping.unwrap(row.subject, row.data_key) } : row))

  async function read(subjects: readonly string[]): Promise<Row[]> {
    const { rows } = await sql<Row>`SELECT subject, data_key FROM subject_keys WHERE subject = ANY(${subjects}::text[])`.execute(db)
    return unwrapped(rows)
  }

  /**
   * One round trip: inserts a fresh key for each subject and answers the stored one. The SELECT
   * cannot see a key another process committed while the INSERT waited on it; those are read again.
   * With `inEventDatabase` the insert commits without waiting for its WAL to reach the disk (a
   * create then costs one round trip, not a second disk flush): the append that follows commits
   * durably to the same database, and flushing its commit flushes every WAL record before it.
   */
  async function makeOrRead(subjects: readonly string[]): Promise<Row[]> {
    const hexKeys = subjects.map((subject) => wrapping.wrap(subject, newDataKey()).toString('hex'))
    const commit = options.inEventDatabase ? 'off' : 'on'
    const { rows } = await sql<Row>`
      WITH settings AS (SELECT set_config('synchronous_commit', ${commit}, true)),
      wanted AS (SELECT w.* FROM unnest(${subjects}::text[], ${hexKeys}::text[]) AS w(subject, hex) CROSS JOIN settings),
      made AS (INSERT INTO subject_keys (subject, data_key) SELECT subject, decode(hex, 'hex') FROM wanted ON CONFLICT (subject) DO NOTHING RETURNING subject, data_key)
      SELECT subject, data_key FROM made
      UNION ALL SELECT k.subject, k.data_key FROM subject_keys k JOIN wanted USING (subject) WHERE k.subject NOT IN (SELECT subject FROM made)`.execute(db)
    const found = new Set(rows.map((row) => row.subject))
    const missed = subjects.filter((subject) => !found.has(subject))
    return missed.length ? [...unwrapped(rows), ...(await read(missed))] : unwrapped(rows)
  }

  /**
   * Key creations grouped as appends are (a group commit): while one makeOrRead is in flight, the
   * subjects that concurrent appends need gather into the next, so 32 clients creating people cost
   * one key round trip per group rather than one each (bench: BENCH_ONLY=sealing).
   */
  type Group = { subjects: Set<string>; rows: Promise<Row[]> }
  let gathering: Group | undefined
  let running: Promise<unknown> = Promise.resolve()
  function madeOrRead(subjects: readonly string[]): Promise<Row[]> {
    if (!gathering) {
      const group: Group = { subjects: new Set(), rows: Promise.resolve([]) }
      // `running` never rejects: a failed group fails its own appends only.
      group.rows = running.then(() => {
        gathering = undefined
        return makeOrRead([...group.subjects])
      })
      gathering = group
      running = group.rows.catch(() => {})
    }
    for (const subject of subjects) gathering.subjects.add(subject)
    return gathering.rows
  }

  return {
    inEventDatabase: options.inEventDatabase ?? false,
    propose(subjects) {
      const fresh = [...new Set(subjects)].filter((subject) => !cached(subject))
      return new Map(
        fresh.map((subject) => {
          const key = newDataKey()
          return [subject, { key, stored: { subject, wrappedKey: wrapping.wrap(subject, key) } }]
        }),
      )
    },
    stored(keys) {
      for (const [subject, key] of keys) remember(subject, key)
    },
    async forSealing(subjects) {
      const keys = known(subjects)
      const unknown = subjects.filter((subject) => keys.get(subject) === undefined)
      if (unknown.length) {
        for (const row of await madeOrRead([...new Set(unknown)])) {
          remember(row.subject, row.data_key)
          keys.set(row.subject, row.data_key)
        }
      }
      return keys as Map<string, Buffer | null>
    },
    async forUnsealing(subjects) {
      const keys = known(subjects)
      const unknown = [...new Set(subjects.filter((subject) => !keys.has(subject)))]
      if (unknown.length) {
        // A subject without a key is not remembered: its key may be on its way (a replica behind).
        for (const row of await read(unknown)) {
          remember(row.subject, row.data_key)
          keys.set(row.subject, row.data_key)
        }
      }
      return keys
    },
    async destroy(subject) {
      await sql`INSERT INTO subject_keys (subject, data_key, destroyed_at) VALUES (${subject}, NULL, now())
        ON CONFLICT (subject) DO UPDATE SET data_key = NULL, destroyed_at = coalesce(subject_keys.destroyed_at, now())`.execute(db)
      remember(subject, null)
    },
  }
}
