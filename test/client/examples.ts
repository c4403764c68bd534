/**
 * The API guide's first steps, written against a client generated from /schema/ (issue 18):
 * `openapi-typescript` turns the document into `./generated/api.d.ts` and `openapi-fetch` calls the
 * API with those types, so a field or a path the document does not have fails to compile.
 * test/client/typed-client.test.ts generates the types, type-checks this file and runs it.
 */
import createClient from 'openapi-fetch'
import type { paths } from './generated/api.d.ts'

export async function firstSteps(baseUrl: string, accessToken: string) {
  const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${accessToken}` } })

  // Who am I: the profile to assign deals to.
  const { data: me } = await api.GET('/api/auth/me/')
  if (!me?.profile_id) throw new Error('no profile')

  // A tag, then a deal with it, assigned to me (amounts are decimal strings).
  const { data: tag } = await api.POST('/api/tags/', { body: { name: 'Renewal' } })
  const { data: created } = await api.POST('/api/opportunities/', { body: { name: 'Acme renewal', amount: '1200', assigned_to: [me.profile_id], tags: [tag!.id] } })

  // The list, filtered by that tag, with totals over the whole filtered set.
  const { data: list } = await api.GET('/api/opportunities/', { params: { query: { tags: [tag!.id] } } })

  // Move it on the board, then read the board's column.
  const dealId = created!.id
  const { data: moved } = await api.PATCH('/api/opportunities/{id}/move/', { params: { path: { id: dealId } }, body: { column_id: 'PROPOSAL' } })
  const { data: board } = await api.GET('/api/opportunities/kanban/')
  const proposal = board?.columns.find((column) => column.id === 'PROPOSAL')

  return { dealId, listed: list?.opportunities.map((deal) => deal.name) ?? [], total: list?.totals.count, moved: moved?.message, inProposal: proposal?.items.map((card) => card.id) ?? [] }
}
