import { createCipheriv, createDecipheriv, createHash } from 'node:crypto'
import { pooledRandomBytes } from './pooled-random.ts'
import { sql } from 'kysely'
import type { Db } from '../db/database.ts'

/**
 * The people's data keys wrapped by a master key (envelope encryption, issue 31; docs/personal-data.md):
 * subject_keys holds each data key encrypted with AES-256-GCM under the master key (CRM_MASTER_KEY),
 * the subject's name as additional data, so a copy of the database alone opens nothing. A stored
 * key is: the format's version, the first 4 bytes of the master key's SHA-256 (which master wrapped
 * it, so a rotation can read both), the IV, the tag and the wrapped key. A row of 32 bytes is a key
 * stored before wrapping began: it is read as it is until `rewrapSubjectKeys` wraps it.
 */
export type MasterKeys = { current: Buffer; retired: readonly Buffer[] }

export type KeyWrapping = {
  wrap(subject: string, dataKey: Buffer): Buffer
  /** The data key; throws when no configured master key wrapped it (a configuration error, never an erasure). */
  unwrap(subject: string, stored: Buffer): Buffer
  /** Whether `stored` is wrapped by the current master key (rewrapSubjectKeys leaves those). */
  isCurrent(stored: Buffer): boolean
}

/** NODE_ENV=test only: one fixed master key, so every test process (and the template databases they copy) reads the others' keys. */
export const TEST_MASTER_KEYS: MasterKeys = { current: createHash('sha256').update('crm test master key: never for real data').digest(), retired: [] }

const FORMAT = 1
const ID_BYTES = 4
const IV_BYTES = 12
const TAG_BYTES = 16
const RAW_KEY_BYTES = 32

const idOf = (master: Buffer) => createHash('sha256').update(master).digest().subarray(0, ID_BYTES)

export function keyWrapping(masters: MasterKeys): KeyWrapping {
  const currentId = idOf(masters.current)
  const byId = new Map([masters.current, ...masters.retired].map((master) => [idOf(master).toString('hex'), master]))
  return {
    wrap(subject, dataKey) {
      const iv = pooledRandomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', masters.current, iv).setAAD(Buffer.from(subject))
      const wrapped = Buffer.concat([cipher.update(dataKey), cipher.final()])
      return Buffer.concat([Buffer.from([FORMAT]), currentId, iv, cipher.getAuthTag(), wrapped])
    },
    unwrap(subject, stored) {
      if (stored.length === RAW_KEY_BYTES) return stored
      const id = stored.subarray(1, 1 + ID_BYTES).toString('hex')
      const master = stored[0] === FORMAT ? byId.get(id) : undefined
      if (!master) throw new Error(`Expected the master key ${id} that wrapped the data key of ${subject} in CRM_MASTER_KEY or CRM_MASTER_KEYS_RETIRED`)
      const at = 1 + ID_BYTES
      const decipher = createDecipheriv('aes-256-gcm', master, stored.subarray(at, at + IV_BYTES)).setAAD(Buffer.from(subject))
      decipher.setAuthTag(stored.subarray(at + IV_BYTES, at + IV_BYTES + TAG_BYTES))
      return Buffer.concat([decipher.update(stored.subarray(at + IV_BYTES + TAG_BYTES)), decipher.final()])
    },
    isCurrent: (stored) => stored.length > RAW_KEY_BYTES && stored[0] === FORMAT && stored.subarray(1, 1 + ID_BYTES).equals(currentId),
  }
}

/**
 * A rotation's last step (docs/personal-data.md): every live data key not wrapped by the current
 * master key (a retired one's, or one stored before wrapping) wrapped again by it, a page at a time.
 * Destroyed keys (null) stay destroyed. Answers how many were rewrapped; afterwards the retired
 * master keys may be dropped from CRM_MASTER_KEYS_RETIRED.
 */
export async function rewrapSubjectKeys(db: Db, wrapping: KeyWrapping, pageSize = 500): Promise<{ rewrapped: number }> {
  let rewrapped = 0
  let after = ''
  for (;;) {
    const { rows } = await sql<{ subject: string; data_key: Buffer }>`
      SELECT subject, data_key FROM subject_keys WHERE subject > ${after} AND data_key IS NOT NULL ORDER BY subject LIMIT ${pageSize}`.execute(db)
    if (rows.length === 0) return { rewrapped }
    const stale = rows.filter((row) => !wrapping.isCurrent(row.data_key))
    for (const row of stale) {
      const wrapped = wrapping.wrap(row.subject, wrapping.unwrap(row.subject, row.data_key))
      // Only if it is still the same key: an erasure meanwhile wins.
      await sql`UPDATE subject_keys SET data_key = ${wrapped} WHERE subject = ${row.subject} AND data_key = ${row.data_key}`.execute(db)
    }
    rewrapped += stale.length
    after = rows.at(-1)!.subject
  }
}
