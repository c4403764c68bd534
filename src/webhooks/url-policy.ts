import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import type { LookupFunction } from 'node:net'

/**
 * Where webhooks may POST (SSRF policy): http(s) only, and, unless private targets are allowed
 * (WEBHOOK_ALLOW_PRIVATE), never an address inside the deployment: loopback, private, link-local
 * (cloud metadata services live there), CGNAT, multicast, unspecified or reserved, in IPv4 and IPv6.
 * A host name is judged by every address it resolves to, at create/change and again for each
 * connection the delivery makes; both go through forbiddenRange, so through the one table below.
 */
type Subnet = readonly [network: string, prefix: number, family: 'ipv4' | 'ipv6']
/** The IPv4 addresses an IPv6 address of the range carries, from its eight 16-bit words. */
type Carried = (words: readonly number[]) => string[]
/** Refused outright, or (with `carries`) refused when an IPv4 address it carries is. */
type Rule = { label: string; subnets: readonly Subnet[]; carries?: Carried }

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
const lastTwoWords: Carried = (w) => [ipv4Of(w[6]!, w[7]!)]

const RULES: readonly Rule[] = [
  // IPv6 forms that carry an IPv4 address, judged by the address they carry (issue 35): a NAT64
  // gateway, a 6to4 relay or a Teredo relay on the way delivers to that IPv4 address.
  { label: 'IPv4-mapped', subnets: [['::ffff:0:0', 96, 'ipv6']], carries: lastTwoWords },
  { label: 'SIIT', subnets: [['::ffff:0:0:0', 96, 'ipv6']], carries: lastTwoWords },
  { label: 'NAT64', subnets: [['64:ff9b::', 96, 'ipv6']], carries: lastTwoWords },
  { label: '6to4', subnets: [['2002::', 16, 'ipv6']], carries: (w) => [ipv4Of(w[1]!, w[2]!)] },
  // Teredo: the server's address, and the client's with every bit flipped (RFC 4380 §4).
  { label: 'Teredo', subnets: [['2001::', 32, 'ipv6']], carries: (w) => [ipv4Of(w[2]!, w[3]!), ipv4Of(~w[6]! & 0xffff, ~w[7]! & 0xffff)] },
  { label: 'unspecified', subnets: [['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']] },
  { label: 'loopback', subnets: [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']] },
  { label: 'private', subnets: [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['fc00::', 7, 'ipv6']] },
  { label: 'link-local', subnets: [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']] },
  { label: 'CGNAT', subnets: [['100.64.0.0', 10, 'ipv4']] },
  { label: 'multicast', subnets: [['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']] },
  // IETF protocol assignments, benchmarking, 240/4 and broadcast; deprecated site-local; the
  // deprecated IPv4-compatible IPv6 (::a.b.c.d), whatever it carries; and the local-use NAT64
  // prefix (RFC 8215), which exists only inside an operator's network and whose IPv4 address sits
  // where the operator's prefix length puts it, so it cannot be read out.
  { label: 'reserved', subnets: [['192.0.0.0', 24, 'ipv4'], ['198.18.0.0', 15, 'ipv4'], ['240.0.0.0', 4, 'ipv4'], ['fec0::', 10, 'ipv6'], ['::', 96, 'ipv6'], ['64:ff9b:1::', 48, 'ipv6']] },
]

const BLOCKED = RULES.map((rule) => {
  const list = new BlockList()
  for (const [network, prefix, family] of rule.subnets) list.addSubnet(network, prefix, family)
  return { ...rule, list }
})

/** The eight 16-bit words of a valid IPv6 address (`::` expanded, a dotted IPv4 tail read as two words). */
function ipv6Words(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address)
  const text = dotted ? `${address.slice(0, dotted.index)}${((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16)}:${((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)}` : address
  const words = (part: string) => (part ? part.split(':').map((word) => parseInt(word, 16)) : [])
  const [head = '', tail] = text.split('::')
  if (tail === undefined) return words(head)
  const [before, after] = [words(head), words(tail)]
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after]
}

/**
 * The kind of non-public address `address` is, or null for a public one. An IPv6 form that carries
 * an IPv4 address is as refused as that address: `NAT64-carried loopback` (an IPv4-mapped one reads
 * as its IPv4 address's kind alone, as the socket would connect to that address itself).
 */
export function forbiddenRange(address: string): string | null {
  const bare = address.replace(/%.*$/, '')
  const family = isIP(bare)
  if (family === 0) return 'not an IP address'
  for (const { label, list, carries } of BLOCKED) {
    // An IPv4 address is never judged by the carrying forms (BlockList matches it against ::ffff:0:0/96).
    if (carries && family === 4) continue
    if (!list.check(bare, family === 4 ? 'ipv4' : 'ipv6')) continue
    if (!carries) return label
    const carried = carries(ipv6Words(bare)).map(forbiddenRange).find((kind) => kind !== null)
    if (carried) return label === 'IPv4-mapped' ? carried : `${label}-carried ${carried}`
  }
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
