import type { Test } from 'tap'
import { FIXED_NOW } from './app.ts'
import { collectionClient, givenTwoOrganizations, succeeding } from './fixtures.ts'
import type { Headers } from './fixtures.ts'

/**
 * The cast of the history tests (deals, tasks): the two organizations on a clock the test moves
 * (`setNow`), Carol (a member who is neither creator nor assignee), Alice named Alice Archer (Bob
 * keeps no name, so his actor name is his email), and two tags to change relations with.
 */
export async function givenHistoryCast(t: Test, base: string) {
  let now = FIXED_NOW
  const cast = await givenTwoOrganizations(t, { clock: () => now })
  const { app, database, acme, alice, bob } = cast
  const carol = await acme.addMember('carol@acme.test')
  await database.db.updateTable('users').set({ first_name: 'Alice', last_name: 'Archer' }).where('id', '=', alice.userId).execute()
  const admin = acme.admin.headers
  const { inject } = collectionClient(app, base)
  const ok = succeeding(t, app)
  const get = (url: string, headers: Headers = admin) => inject('GET', url, headers)
  const tag = async (name: string) => (await ok('POST', '/api/tags/', admin, { name })).id as string
  return {
    ...cast,
    carol,
    admin,
    inject,
    ok,
    get,
    hot: await tag('hot'),
    cold: await tag('cold'),
    aliceRef: { id: alice.profileId, name: 'Alice Archer' },
    bobRef: { id: bob.profileId, name: 'bob@acme.test' },
    setNow: (instant: Date) => {
      now = instant
    },
  }
}
