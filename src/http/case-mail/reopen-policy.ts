import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { reopenPolicyDecider, reopenPolicyId, reopenPolicyStreams } from '../../commands/case-mail/reopen-policy.ts'
import type { Deps } from '../../deps.ts'
import { ForbiddenError } from '../../errors.ts'
import { reopenFigures, reopenPolicyOf } from '../../projections/case-mail/queries.ts'
import { identityOf } from '../kernel/auth.ts'
import { requestCommands } from '../kernel/commands.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { ReopenPolicyAnswer, ReopenPolicyBody, ReopenPolicyView } from './schemas.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors } as const

/** The original's ReopenPolicyView: admins only, reading as well as writing. */
function adminOrgOf(request: Parameters<typeof identityOf>[0]): { orgId: string; profileId: string | null } {
  const identity = identityOf(request)
  if (identity.role !== 'ADMIN') throw new ForbiddenError('Admin access required')
  return identity
}

/** Whether a customer's reply reopens a closed case (GET answers the defaults until an admin saves one), with its 30-day figures. */
export function reopenPolicyRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    app.get('/api/cases/reopen-policy/', { schema: { tags: TAGS, summary: "The organization's reopen policy and its figures over 30 days (admins)", response: { 200: ReopenPolicyAnswer, ...errors } } }, async (request) => {
      const { orgId } = adminOrgOf(request)
      const [policy, figures] = await Promise.all([reopenPolicyOf(db, orgId), reopenFigures(db, orgId, clock())])
      return { ...policy, ...figures }
    })
    app.put('/api/cases/reopen-policy/', { schema: { tags: TAGS, summary: 'Change the reopen policy (admins); fields left out stay', body: ReopenPolicyBody, response: { 200: ReopenPolicyView, ...errors } } }, async (request, reply) => {
      const { orgId, profileId } = adminOrgOf(request)
      const commands = requestCommands(deps, request, reply)
      await commands.run(reopenPolicyDecider, reopenPolicyStreams.stream(reopenPolicyId(orgId)), { type: 'SetReopenPolicy', orgId, changes: request.body, actorId: profileId, at: clock().toISOString() })
      await commands.settle()
      return reopenPolicyOf(db, orgId)
    })
  }
}
