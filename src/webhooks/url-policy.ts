import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import type { LookupFunction } from 'node:net'

/**
 * Where webhooks may POST (SSRF policy): http(s) only, and, unless private targets are allowed
 * (WEBHOOK_ALLOW_PRIVATE), never an address inside the deployment: loopback, private, link-local
 * (cloud metadata services live there), CGNAT, multicast, unspecified or reserved, in IPv4 and IPv6
 * (IPv4-mapped IPv6 addresses count as the IPv4 address they carry). A host name is judged by every
 * address it resolves to, at create/change and again for each connection the delivery makes.
 */
const RANGES: ReadonlyArray<[label: string, ranges: ReadonlyArray<[network: string, prefix: number, family: 'ipv4' | 'ipv6']>]> = [
  ['unspecified', [['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']]],
  ['loopback', [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]],
  ['private', [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['fc00::', 7, 'ipv6']]],
  ['link-local', [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]],
  ['CGNAT', [['100.64.0.0', 10, 'ipv4']]],
  ['multicast', [['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']]],
  // IETF protocol assignments, benchmarking, 240/4 and broadcast; deprecated site-local and
  // IPv4-compatible IPv6 (::a.b.c.d), which can carry a loopback or private IPv4 address.
  ['reserved', [['192.0.0.0', 24, 'ipv4'], ['198.18.0.0', 15, 'ipv4'], ['240.0.0.0', 4, 'ipv4'], ['fec0::', 10, 'ipv6'], ['::', 96, 'ipv6']]],
]

const BLOCKED = RANGES.map(([label, ranges]) => {
  const list = new BlockList()
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family)
  return [label, list] as const
})

/** The kind of non-public address `address` is (an IPv4-mapped IPv6 one judged as its IPv4), or null for a public one. */
export function forbiddenRange(address: string): string | null {
  const bare = address.replace(/%.*$/, '')
  const family = isIP(bare)
  if (family === 0) return 'not an IP address'
  // BlockList matches ::ffff:a.b.c.d against the IPv4 rules itself (Node ≥ 20).
  for (const [label, list] of BLOCKED) if (list.check(bare, family === 4 ? 'ipv4' : 'ipv6')) return label
  return null
}

export type ResolvedAddress = { address: string; family: number }
/** Host name → every address it resolves to; injectable so tests can play a DNS that changes its answer. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

/** getaddrinfo, as a connection would resolve (hosts file included). */
export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true })

export type TargetPolicy = { allowPrivate: boolean; resolve: Resolver }

/** A delivery refused by the policy: recorded as a failure with this reason, never retried. */
export class ForbiddenTargetError extends Error {
  override name = 'ForbiddenTargetError'
}

/** The URL's host without IPv6 brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1')

const refusal = (host: string, address: string, label: string) =>
  host === address ? `${address} is a ${label} address; webhook targets must be public` : `${host} resolves to ${address}, a ${label} address; webhook targets must be public`

/** Why an address may not be used, or null: the answer is judged whole, so one private address among public ones refuses it. */
function refusedAddresses(host: string, addresses: readonly ResolvedAddress[]): string | null {
  if (addresses.length === 0) return `${host} resolves to no address`
  for (const { address } of addresses) {
    const label = forbiddenRange(address)
    if (label) return refusal(host, address, label)
  }
  return null
}

/**
 * The create/change check: why `text` is refused, or null. A name that does not resolve (yet) is
 * accepted: the check at delivery time is the one that counts, as DNS answers change.
 */
export async function refusedWebhookUrl(text: string, policy: TargetPolicy, timeoutMs = 3000): Promise<string | null> {
  const url = new URL(text)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'Expected an http:// or https:// URL.'
  if (policy.allowPrivate) return null
  const host = hostOf(url)
  if (isIP(host)) return refusedAddresses(host, [{ address: host, family: isIP(host) }])
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(resolve, timeoutMs, null)))
  const addresses = await Promise.race([policy.resolve(host).catch(() => null), timeout]).finally(() => clearTimeout(timer))
  return addresses ? refusedAddresses(host, addresses) : null
}

/** Before connecting to an IP literal, which never goes through the lookup below. */
export function assertLiteralAllowed(url: URL, policy: TargetPolicy): void {
  const host = hostOf(url)
  const reason = !policy.allowPrivate && isIP(host) ? refusedAddresses(host, [{ address: host, family: isIP(host) }]) : null
  if (reason) throw new ForbiddenTargetError(reason)
}

/**
 * The `lookup` of a delivery's connection: it resolves with the policy's resolver and hands the
 * socket only addresses it has checked, so a DNS answer that changed since (rebinding) cannot slip
 * a private address in between the check and the connect.
 */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    policy.resolve(hostname).then(
      (addresses) => {
        const reason = policy.allowPrivate ? (addresses.length ? null : `${hostname} resolves to no address`) : refusedAddresses(hostname, addresses)
        if (reason) return callback(new ForbiddenTargetError(reason), '', 0)
        if (options.all) return (callback as unknown as (error: null, all: ResolvedAddress[]) => void)(null, addresses)
        const chosen = addresses.find((a) => !options.family || a.family === options.family) ?? addresses[0]!
        callback(null, chosen.address, chosen.family)
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    )
  }
}
