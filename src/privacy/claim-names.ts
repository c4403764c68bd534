import { START } from '../eventstore/event-store.ts'
import type { EventStore } from '../eventstore/event-store.ts'
import { isLegacyClaimStream, keyedClaimStream, legacyClaimStream } from '../commands/name-claim.ts'
import type { SubjectKeys } from './subject-keys.ts'

/**
 * The streams a unique name's claim lives in (issue 31, docs/personal-data.md "Stream names"): a
 * claim is made under an HMAC of the name keyed by the installation's claim key, so a stream name
 * no longer lets anyone test a guessed email. Claims made before (under an unsalted hash) still
 * count: `legacy` names that stream too, while the installation has any such claim, so that they
 * keep blocking a duplicate and are released with the record.
 */
export type ClaimStreams = { keyed: string; legacy: string | null }
export type ClaimNames = { streamsOf(scope: string, orgId: string, name: string): Promise<ClaimStreams> }

/**
 * The claim key is a data key of its own in subject_keys (made once, by whichever process needs it
 * first), wrapped by the master key like the people's keys: a copy of the database alone opens
 * nothing, a master-key rotation rewraps it (`privacy rewrap-keys`) and leaves it the same, and every
 * process of the installation shares it with no setting to keep equal. It is never destroyed.
 */
export const CLAIM_KEY_SUBJECT = 'installation:name-claims'

/** Claims are read a page of the log at a time while looking for the first one. */
const PAGE = 1000

/**
 * Whether the log holds claims under the unsalted name. Processes of this version only make keyed
 * claims, so the older ones all come before the first keyed claim: the log's first claim answers.
 */
async function hasLegacyClaims(store: EventStore): Promise<boolean> {
  for (let after = START; ; ) {
    const page = await store.readAll({ after, maxCount: PAGE, eventTypes: ['NameClaimed'] })
    if (page.events.length) return isLegacyClaimStream(page.events[0]!.streamName)
    if (page.isEnd) return false
    after = page.scannedTo
  }
}

/** Remembers a lookup's answer for the life of the process; a failed one is tried again next time. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let answer: Promise<T> | undefined
  return () =>
    (answer ??= load().catch((error: unknown) => {
      answer = undefined
      throw error
    }))
}

/**
 * Claim naming for one installation. Both facts are read once per process, the first time a name
 * is looked up (no round trip per create afterwards): the claim key, and whether any unsalted claim
 * exists (none on an installation that began with keyed claims, which then never reads a second stream).
 */
export function claimNames(store: EventStore, keys: SubjectKeys): ClaimNames {
  const claimKey = once(async () => {
    const key = (await keys.forSealing([CLAIM_KEY_SUBJECT])).get(CLAIM_KEY_SUBJECT)
    if (!key) throw new Error(`Expected the name claims' key (${CLAIM_KEY_SUBJECT} in subject_keys); it was destroyed`)
    return key
  })
  const legacyInUse = once(() => hasLegacyClaims(store))
  return {
    async streamsOf(scope, orgId, name) {
      const [key, legacy] = await Promise.all([claimKey(), legacyInUse()])
      return { keyed: keyedClaimStream(key, scope, orgId, name), legacy: legacy ? legacyClaimStream(scope, orgId, name) : null }
    },
  }
}
