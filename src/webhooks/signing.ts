import { createHmac, timingSafeEqual } from 'node:crypto'
import { newSecret } from '../identity/secrets.ts'

export const WEBHOOK_SECRET_PREFIX = 'svc_whsec_'
export const TIMESTAMP_HEADER = 'x-webhook-timestamp'
export const SIGNATURE_HEADER = 'x-webhook-signature'

/** 256 random bits, shown once at creation. Stored as is: signing needs it back (unlike credentials, which keep a hash). */
export const newWebhookSecret = (): string => newSecret(WEBHOOK_SECRET_PREFIX).raw

/** `sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`: the X-Webhook-Signature of a delivery. */
export function signDelivery(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`
}

/**
 * The X-Webhook-Signature of a delivery signed with each secret (the current one first):
 * `sha256=<hex>`, or during a rotation's grace period `sha256=<new>, sha256=<old>`, so a receiver
 * still holding the old secret verifies as well as one holding the new.
 */
export const signatureHeader = (secrets: readonly string[], timestamp: string, body: string): string => secrets.map((secret) => signDelivery(secret, timestamp, body)).join(', ')

/**
 * What a receiver does (and the tests do): recompute and compare in constant time with each
 * signature of the header. Receivers should also refuse old timestamps.
 */
export function verifyDelivery(secret: string, timestamp: string, body: string, header: string): boolean {
  const expected = Buffer.from(signDelivery(secret, timestamp, body))
  return header.split(',').some((signature) => {
    const given = Buffer.from(signature.trim())
    return expected.length === given.length && timingSafeEqual(expected, given)
  })
}
