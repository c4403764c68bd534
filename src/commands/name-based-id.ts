import { createHash } from 'node:crypto'

/**
 * A name-based (v5-style, SHA-1) uuid of `name`: the same name always gives the same id. What makes
 * work that may run twice (a first request racing another, a scheduled process on two ticks)
 * decide the same stream or record, so the second finds it done.
 */
export function nameBasedId(name: string): string {
  const hash = createHash('sha1').update(name).digest()
  hash[6] = (hash[6]! & 0x0f) | 0x50
  hash[8] = (hash[8]! & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
