import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CommandRunner } from '../commands/command-runner.ts'
import { handleCommand } from '../commands/handle-command.ts'
import { formatPosition, maxPosition } from '../eventstore/event-store.ts'
import type { Position } from '../eventstore/event-store.ts'
import type { AppDeps } from './app.ts'
import { identityOf } from './plugins/auth.ts'

export const EVENT_POSITION_HEADER = 'x-event-position'

export type RequestCommands = {
  run: CommandRunner
  /**
   * Read-your-writes: waits until the read models have applied every event this request appended
   * (or fails with 503 after READ_YOUR_WRITES_TIMEOUT_MS), and reports the position in a header.
   */
  settle(): Promise<void>
}

/** Commands on behalf of the authenticated caller: actor, organization and request id travel in every event's metadata. */
export function requestCommands({ store, projections, config }: AppDeps, request: FastifyRequest, reply: FastifyReply): RequestCommands {
  const identity = identityOf(request)
  const metadata = { actorId: identity.profileId, orgId: identity.orgId, requestId: request.id, correlationId: request.id }
  let last: Position | null = null
  return {
    run: async (decider, streamName, command, options) => {
      const result = await handleCommand(store, decider, streamName, command, { metadata, ...options })
      if (result.position) last = last ? maxPosition(last, result.position) : result.position
      return result
    },
    async settle() {
      if (!last) return
      reply.header(EVENT_POSITION_HEADER, formatPosition(last))
      await projections.waitFor(last, config.readYourWritesTimeoutMs)
    },
  }
}
