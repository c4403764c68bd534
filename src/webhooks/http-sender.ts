import http from 'node:http'
import https from 'node:https'
import { assertLiteralAllowed, guardedLookup } from './url-policy.ts'
import type { TargetPolicy } from './url-policy.ts'

export type SendRequest = { body: string; headers: Record<string, string>; signal: AbortSignal }
/** POSTs one delivery and answers the receiver's status; a refused target or a network failure rejects. */
export type Sender = (url: string, request: SendRequest) => Promise<{ status: number }>

/**
 * Deliveries over node:http(s) rather than fetch: its `lookup` hook lets every connection use only
 * addresses the target policy checked (see guardedLookup), and it never follows a redirect, so a
 * receiver cannot bounce a delivery to an internal address either (a 3xx is a failed attempt).
 */
export function createHttpSender(policy: TargetPolicy): Sender {
  const lookup = guardedLookup(policy)
  return (target, { body, headers, signal }) =>
    new Promise((resolve, reject) => {
      const url = new URL(target)
      assertLiteralAllowed(url, policy)
      const client = url.protocol === 'https:' ? https : http
      // A fresh connection per delivery (no agent): each is resolved and checked now, and no idle socket outlives the dispatcher.
      const request = client.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, lookup, signal, agent: false })
      request.on('error', reject)
      request.on('response', (response) => {
        response.resume()
        resolve({ status: response.statusCode ?? 0 })
      })
      request.end(body)
    })
}
