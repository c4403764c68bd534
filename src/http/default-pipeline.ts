import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { DEFAULT_PIPELINE_NAME, defaultPipelineId, pipelineDecider, pipelineStreams } from '../commands/pipeline/pipeline.ts'
import { SEED_STAGE_COUNT } from '../commands/pipeline/stage-rules.ts'
import type { AppDeps } from './app.ts'
import { requestCommands } from './commands.ts'
import { identityOf } from './plugins/auth.ts'

export const newStageIds = () => Array.from({ length: SEED_STAGE_COUNT }, () => randomUUID())

/**
 * The caller's organization's default pipeline id, creating the pipeline on first use (§2.2). Its
 * stream id is derived from the org id, so concurrent first requests append to the same new
 * stream; the loser's retry finds it created and decides nothing. Either way the request then
 * waits until the read models hold it (which also covers tables still being built at startup).
 */
export async function ensureDefaultPipeline(deps: AppDeps, request: FastifyRequest, reply: FastifyReply): Promise<string> {
  const { store, projections, config, clock } = deps
  const { orgId } = identityOf(request)
  const id = defaultPipelineId(orgId)
  const stream = pipelineStreams.stream(id)
  let last = (await store.readStream(stream, { fromRevision: 0n, maxCount: 1 })).at(-1)
  if (!last) {
    const commands = requestCommands(deps, request, reply)
    const at = clock().toISOString()
    const result = await commands.run(pipelineDecider, stream, { type: 'CreatePipeline', pipelineId: id, orgId, name: DEFAULT_PIPELINE_NAME, isDefault: true, stageIds: newStageIds(), actorId: null, at })
    await commands.settle()
    if (result.position) return id
    last = (await store.readStream(stream, { fromRevision: 0n, maxCount: 1 })).at(-1)
  }
  if (last) await projections.waitFor(last.position, config.readYourWritesTimeoutMs)
  return id
}
