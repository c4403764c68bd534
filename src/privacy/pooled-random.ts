import { randomFillSync } from 'node:crypto'

/**
 * Cryptographically random bytes drawn from a pool refilled 4 KiB at a time, as crypto.randomUUID
 * draws its own: a call into OpenSSL per few hundred IVs and data keys rather than one each, which
 * was a tenth of sealing a contact's create (docs/personal-data.md). Each answer is a copy, so a
 * refill never changes a key or an IV already handed out; no byte is handed out twice.
 */
const POOL_BYTES = 4096
const pool = Buffer.alloc(POOL_BYTES)
let drawn = POOL_BYTES

export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_BYTES) throw new Error(`Expected at most ${POOL_BYTES} random bytes at a time`)
  if (drawn + size > POOL_BYTES) {
    randomFillSync(pool)
    drawn = 0
  }
  const bytes = Buffer.from(pool.subarray(drawn, drawn + size))
  // Zeroed as handed out, so that the pool never holds a copy of a data key still in use.
  pool.fill(0, drawn, drawn + size)
  drawn += size
  return bytes
}
