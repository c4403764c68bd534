import t from 'tap'
import { keyedClaimStream, legacyClaimStream } from '../../src/commands/name-claim.ts'
import { classifyClaims, foldClaims, parseClaimStream } from '../../src/names/orphans.ts'
import type { ClaimEventRecord } from '../../src/names/orphans.ts'

const ORG = '0b3c8d2e-4f5a-4b6c-8d7e-9f0a1b2c3d4e'
const OWNER = '11111111-2222-4333-8444-555555555555'
const OTHER = '66666666-7777-4888-9999-000000000000'
const KEY = Buffer.alloc(32, 7)
const nameClaimStream = (scope: string, orgId: string, name: string) => keyedClaimStream(KEY, scope, orgId, name)
const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 9, minute))
const claimed = (stream: string, revision: number, owner: string, name: string, minute: number): ClaimEventRecord => ({ streamName: stream, revision: BigInt(revision), createdAt: at(minute), type: 'NameClaimed', data: { owner_id: owner, name } })
const released = (stream: string, revision: number, owner: string, minute: number): ClaimEventRecord => ({ streamName: stream, revision: BigInt(revision), createdAt: at(minute), type: 'NameReleased', data: { owner_id: owner } })

t.test('parseClaimStream reads scope and organization back from the stream name', async (t) => {
  t.same(parseClaimStream(nameClaimStream('account', ORG, 'Acme')), { scope: 'account', orgId: ORG })
  t.same(parseClaimStream(nameClaimStream('custom_field_key:leads', ORG, 'budget')), { scope: 'custom_field_key:leads', orgId: ORG }, 'scopes with colons')
  t.same(parseClaimStream(nameClaimStream('a-b', ORG, 'x')), { scope: 'a-b', orgId: ORG }, 'scopes with dashes')
  t.same(parseClaimStream(legacyClaimStream('a-b', ORG, 'x')), { scope: 'a-b', orgId: ORG }, 'and claims made before claims were keyed (unsalted)')
  t.equal(parseClaimStream('name_claim-account-not-an-org-abc'), undefined)
  t.equal(parseClaimStream(`${legacyClaimStream('account', ORG, 'Acme')}0`), undefined, 'a hash of neither shape')
  t.equal(parseClaimStream(`account-${OWNER}`), undefined)
})

t.test('foldClaims: the last event of each stream decides its holder', async (t) => {
  const a = nameClaimStream('account', ORG, 'Acme')
  const b = legacyClaimStream('tag', ORG, 'VIP')
  const claims = foldClaims([claimed(a, 0, OWNER, 'Acme', 1), claimed(b, 0, OWNER, 'VIP', 2), released(a, 1, OWNER, 3), claimed(a, 2, OTHER, 'ACME', 4), released(b, 1, OWNER, 5), { ...claimed('other-stream', 0, OWNER, 'x', 6) }])
  t.same([...claims.keys()].sort(), [a, b].sort(), 'streams of another shape are skipped')
  t.same(claims.get(a), { streamName: a, scope: 'account', orgId: ORG, name: 'ACME', ownerId: OTHER, claimedAt: at(4), revision: 2n })
  t.match(claims.get(b), { ownerId: null, name: 'VIP', revision: 1n })
  t.same(foldClaims([released(a, 3, OTHER, 7)], claims).get(a)?.ownerId, null, 'folds on from an earlier result')
})

t.test('classifyClaims', async (t) => {
  const claim = (scope: string, name: string, owner: string, minute: number) => foldClaims([claimed(nameClaimStream(scope, ORG, name), 0, owner, name, minute)]).values().next().value!
  const live = new Map([
    ['account', new Map([[OWNER, ' acme ']])],
    ['team', new Map<string, string | null>()],
  ])
  const now = at(30)
  const graceMs = 5 * 60_000

  t.test('a live record carrying the name (ignoring case and spaces) holds its claim', async (t) => {
    t.match(classifyClaims([claim('account', 'ACME', OWNER, 1)], live, { now, graceMs }), { orphans: [], held: 1 })
  })
  t.test('no live record of the owner: an orphan', async (t) => {
    const ghost = claim('account', 'Ghost', OTHER, 1)
    t.same(classifyClaims([ghost], live, { now, graceMs }).orphans, [ghost])
    t.same(classifyClaims([claim('team', 'Sales', OWNER, 1)], live, { now, graceMs }).orphans.length, 1, 'a scope with no live owner at all')
  })
  t.test('a live record under another name (a rename cut short): an orphan', async (t) => {
    t.equal(classifyClaims([claim('account', 'Acme Two', OWNER, 1)], live, { now, graceMs }).orphans.length, 1)
  })
  t.test('within the grace period nothing is judged', async (t) => {
    t.match(classifyClaims([claim('account', 'Ghost', OTHER, 26)], live, { now, graceMs }), { orphans: [], recent: 1 })
    t.match(classifyClaims([claim('account', 'Ghost', OTHER, 25)], live, { now, graceMs }), { orphans: [{ name: 'Ghost' }], recent: 0 }, 'exactly the grace period old counts')
  })
  t.test('released claims are not counted; unknown scopes are reported, never orphans', async (t) => {
    const free = { ...claim('account', 'Free', OWNER, 1), ownerId: null }
    t.same(classifyClaims([free, claim('mystery', 'x', OWNER, 1), claim('mystery', 'y', OWNER, 1)], live, { now, graceMs }), { orphans: [], held: 0, recent: 0, unknownScopes: ['mystery'] })
  })
  t.test('orphans come oldest first', async (t) => {
    const result = classifyClaims([claim('account', 'B', OTHER, 3), claim('account', 'A', OTHER, 2)], live, { now, graceMs })
    t.same(result.orphans.map((c) => c.name), ['A', 'B'])
  })
})
