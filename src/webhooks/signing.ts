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

/** What a receiver does (and the tests do): recompute and compare in constant time. Receivers should also refuse old timestamps. */
export function verifyDelivery(secret: string, timestamp: string, body: string, signature: string): boolean {
  const expected = Buffer.from(signDelivery(secret, timestamp, body))
  const given = Buffer.from(signature)
  return expected.length === given.length && timingSafeEqual(expected, given)
}
