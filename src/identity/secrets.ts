import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** Raw credential prefixes: they tell the kind of a credential at a glance and let scanners find leaked ones. */
export const PAT_PREFIX = 'svc_pat_'
export const API_KEY_PREFIX = 'svc_key_'
export const REFRESH_TOKEN_PREFIX = 'svc_rt_'
export const MAGIC_LINK_PREFIX = 'svc_ml_'

export type NewSecret = { raw: string; hash: Buffer; displayPrefix: string }

/** 256 random bits; only the SHA-256 hash is stored, the raw value is shown once. */
export function newSecret(prefix: string): NewSecret {
  const raw = `${prefix}${randomBytes(32).toString('base64url')}`
  return { raw, hash: hashSecret(raw), displayPrefix: raw.slice(0, prefix.length + 6) }
}

/**
 * Credentials are looked up by this hash through a unique index. A lookup by hash leaks nothing
 * useful through timing: an attacker cannot steer the hash of a guess towards a stored one.
 */
export function hashSecret(raw: string): Buffer {
  return createHash('sha256').update(raw, 'utf8').digest()
}

/** Constant-time comparison for the places that compare secrets directly (one-time codes). */
export function secretsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}
