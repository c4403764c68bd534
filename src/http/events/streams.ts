import { once, setMaxListeners } from 'node:events'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { exportedEvent } from '../../events/export.ts'
import { z } from 'zod'
import { opportunityStreams } from '../../commands/opportunity/opportunity.ts'
import { NotFoundError, ProjectionLagError, orNotFound } from '../../errors.ts'
import { START, formatPosition, parsePosition } from '../../eventstore/event-store.ts'
import type { EventStore, Position, RecordedEvent } from '../../eventstore/event-store.ts'
import { viewerOfIdentity } from '../../visibility/policy.ts'
import { lookupsOf } from '../../lookups/lookups.ts'
import { readCheckpoints } from '../../projections/kernel/checkpoints.ts'
import { NOTIFICATIONS, notificationEventTypes, notificationsMadeAt } from '../../projections/notification/notifications.ts'
import type { RecordKinds } from '../../projections/record/record-kinds.ts'
import { opportunitiesProjector } from '../../projections/opportunity/opportunities.ts'
import type { OpportunityView } from '../../projections/opportunity/opportunities.ts'
import { pipelineOf } from '../../projections/pipeline/pipelines.ts'
import type { RebuildProgress } from '../../projections/kernel/rebuild.ts'
import { projectionsStatus } from '../../projections/kernel/status.ts'
import { readLeases } from '../../projections/kernel/leases.ts'
import type { LeaseRow } from '../../projections/kernel/leases.ts'
import type { Deps } from '../../deps.ts'
import { DEAL_ROW_EVENTS, dealChange, dealRow } from '../opportunities/opportunity-changes.ts'
import type { DealWatcher } from '../opportunities/opportunity-changes.ts'
import { ensureDefaultPipeline } from '../../commands/pipeline/default-pipeline.ts'
import { registerMinPosition } from '../kernel/min-position.ts'
import { cardsOf, opportunitiesOf } from '../opportunities/opportunity-views.ts'
import { notificationBodies } from '../notifications/notification-views.ts'
import { identityOf, requireAdmin } from '../kernel/auth.ts'
import { isUuid } from '../kernel/relations.ts'
import { openSse, resumePosition } from '../kernel/sse.ts'
import type { SseStream } from '../kernel/sse.ts'
import { ErrorBody, authErrors } from '../kernel/schemas/common.ts'
import { callerOf } from '../kernel/commands.ts'

/**
 * Issue 8 §3: the organization's events as a pull feed and as Server-Sent Events, live changes of
 * the deals read model, the projections' status, and read-your-writes across processes
 * (`min_position`, see min-position.ts). The event feeds expose every change of the organization,
 * whoever may see the record, so they are for admins; the deal streams apply the list's visibility.
 */
const PositionText = z
  .string()
  .transform((text, ctx) => parsePosition(text) ?? (ctx.addIssue({ code: 'custom', message: 'Expected a position such as 1234-5' }), z.NEVER))
  .describe('A global position, `commit-prepare`, as X-Event-Position and the feeds give it')
const Types = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((value) => {
    const types = [value ?? []].flat().map((t) => t.trim()).filter(Boolean)
    return types.length ? types : undefined
  })
  .describe('Only events of this type; repeat for several')
const StreamQuery = z.object({ after: PositionText.optional().describe('Start after this position (the Last-Event-ID header wins)'), type: Types })
const FeedQuery = z.object({
  after: PositionText.optional().describe('Exclusive: the `next` of the previous page; the start of the log when absent'),
  type: Types,
  limit: z.coerce.number().int().min(1).max(1000).default(100),
})
const FeedEvent = z.object({ position: z.string(), stream: z.string(), revision: z.number().int(), type: z.string(), data: z.unknown(), at: z.string() })
const Feed = z.object({
  events: z.array(FeedEvent),
  next: z.string().describe('Pass as `after` for the next page, even when `events` is empty: every event up to it has been considered'),
  is_end: z.boolean().describe('The page reached the visible end of the log: poll again later'),
})
const Rebuild = z
  .object({
    version: z.number().int(),
    started_at: z.string().nullable(),
    events: z.number().int().describe('Events replayed into the new version so far'),
    events_per_second: z.number().int(),
    done: z.number().describe('Share of the log replayed, by position, 0 to 1'),
    eta_seconds: z.number().int().nullable(),
  })
  .describe('The new version being built beside the serving one, which answers reads until the swap at the head of the log')
const ProjectionState = z.object({
  name: z.string(),
  version: z.number().int().describe("This code's version of the read model"),
  stored_version: z.number().int().nullable().describe('The version whose tables serve reads now; differs from `version` while the new one builds'),
  building: Rebuild.nullable().describe('Null when no rebuild runs; known progress only in the process that leads (elsewhere started_at is null and the counts 0)'),
  checkpoint: z.string().nullable(),
  updated_at: z.string().nullable(),
  lag_events: z.number().int(),
  lag_events_capped: z.boolean(),
  lag_ms: z.number(),
  lag_seconds: z.number().describe('The age of its oldest unapplied event, in seconds (0 when caught up)'),
  unit: z
    .object({
      owner: z.string().nullable().describe('The process applying it (host:pid:tag), null while nobody does'),
      epoch: z.string().describe('Grows at every change of owner; each page commits only under the epoch its process holds'),
      lease_until: z.string().nullable().describe('When the owner must have renewed by, or lose it to another process'),
      this_process: z.boolean(),
    })
    .describe('Each read model is a unit that one process at a time applies, on a lease (docs/operations.md, "Projection units")'),
  failure: z.string().nullable(),
})
function rebuildView(name: string, version: number, rebuilds: ReadonlyMap<string, RebuildProgress | null>): z.infer<typeof Rebuild> | null {
  if (!rebuilds.has(name)) return null
  const progress = rebuilds.get(name)
  if (!progress) return { version, started_at: null, events: 0, events_per_second: 0, done: 0, eta_seconds: null }
  return { version, started_at: progress.startedAt.toISOString(), events: progress.events, events_per_second: progress.eventsPerSecond, done: progress.done, eta_seconds: progress.etaSeconds }
}

function unitView(lease: LeaseRow | undefined, process: string): z.infer<typeof ProjectionState>['unit'] {
  return { owner: lease?.owner ?? null, epoch: String(lease?.epoch ?? 0n), lease_until: lease?.leaseUntil?.toISOString() ?? null, this_process: lease?.owner === process }
}

const Projections = z.object({
  leader: z.boolean().describe('Whether this process runs the scheduled processes (escalations, recurring invoices, sweeps: one process at a time)'),
  process: z.string().describe("This process's name in `unit.owner`"),
  projections: z.array(ProjectionState),
  visibility: z.object({ hidden_events: z.number().int(), hidden_for_ms: z.number(), blocked_by_pid: z.number().int().nullable() }),
})
/** A stream's answers: `text/event-stream` frames, or an error before the stream opened. */
const sseErrors = {
  200: { description: 'Server-Sent Events: `event:`, `id:` (a position) and `data:` (JSON) lines per frame', content: { 'text/event-stream': { schema: z.string() } } },
  400: ErrorBody,
  ...authErrors,
}
const SSE_NOTE = 'Server-Sent Events. A first `ready` frame carries the start position as its id; reconnect with Last-Event-ID (or `?after=`) to resume with no gap and no duplicate. A comment line every 15 s keeps the connection alive; a client that stops reading is disconnected and resumes.'

/** Feeds scan the shared log in pages of this many and return after this many pages, with the cursor reached. */
const SCAN_PAGE = 500
const MAX_SCANS = 20

// Subscribers see the current shape of every event, whichever version it was stored in.
const feedEvent = (e: RecordedEvent): z.infer<typeof FeedEvent> => exportedEvent(e)

/** Up to `limit` events of the organization after `after`; `next` is where the scan stopped, so following it sees every event once. */
async function orgEvents(store: EventStore, orgId: string, query: { after?: Position; type?: string[]; limit: number }) {
  const events: RecordedEvent[] = []
  let cursor = query.after ?? START
  let isEnd = false
  for (let scans = 0; scans < MAX_SCANS && events.length < query.limit && !isEnd; scans++) {
    const page = await store.readAll({ after: cursor, maxCount: Math.max(SCAN_PAGE, query.limit), eventTypes: query.type })
    isEnd = page.isEnd
    for (const event of page.events) {
      if (event.metadata.orgId !== orgId) continue
      if (events.length === query.limit) return { events, next: events.at(-1)!.position, isEnd: false }
      events.push(event)
    }
    cursor = page.scannedTo
  }
  return { events, next: cursor, isEnd }
}

export function streamRoutes(deps: Deps, recordKinds: RecordKinds): FastifyPluginAsyncZod {
  const { db, store, projections, config, clock, logger } = deps
  const plugin: FastifyPluginAsyncZod = async (app) => {
    registerMinPosition(app, deps)
    // Open streams would keep the server from closing: they end first.
    const closing = new AbortController()
    setMaxListeners(0, closing.signal)
    app.addHook('preClose', async () => closing.abort())

    /** Runs a stream's producer; a failure after the headers went out is logged and ends the stream (the client resumes). */
    async function run(request: FastifyRequest, stream: SseStream, start: Position, produce: () => Promise<void>) {
      try {
        if (await stream.send({ event: 'ready', id: formatPosition(start), data: { position: formatPosition(start) } })) await produce()
      } catch (error) {
        if (!stream.signal.aborted) request.log.error({ err: error }, 'event stream failed')
      } finally {
        stream.end()
      }
    }

    /** Resolves once the read models applied `position`, waiting as long as the stream lasts; false when it ended first. */
    async function applied(position: Position, signal: AbortSignal): Promise<boolean> {
      while (!signal.aborted) {
        try {
          await projections.waitFor(position, config.readYourWritesTimeoutMs)
          return true
        } catch (error) {
          if (!(error instanceof ProjectionLagError)) throw error
          logger.warn({ position: formatPosition(position) }, 'stream waiting for lagging read models')
        }
      }
      return false
    }

    /** The deal changes `watcher` may see, each once the read model holds it, rendered by `render`. */
    async function streamDeals(request: FastifyRequest, reply: FastifyReply, after: Position | undefined, watcher: DealWatcher, render: (row: OpportunityView) => Promise<unknown>) {
      const given = resumePosition(request.headers['last-event-id'], after)
      // Without a resume point: from what the deals read model holds now (open the stream, then read the list).
      const start = given ?? (await readCheckpoints(db)).find((c) => c.name === opportunitiesProjector.name)?.position ?? START
      const stream = openSse(reply, closing.signal)
      await run(request, stream, start, async () => {
        for await (const event of store.subscribeToAll({ after: start, eventTypes: DEAL_ROW_EVENTS, signal: stream.signal })) {
          // Events appended without an organization (system work) are judged by the row's.
          if (event.metadata.orgId != null && event.metadata.orgId !== watcher.orgId) continue
          if (!(await applied(event.position, stream.signal))) return
          const row = await dealRow(db, watcher.orgId, opportunityStreams.idOf(event.streamName))
          // The row already holds a later change of this deal (a catch-up after a reconnect, or writes
          // racing the stream): that change's own event comes further on and carries this row under its
          // id. Sending it now would put today's deal under an older position; so a catch-up coalesces
          // into one frame per deal, and every frame's data is the deal as of its id.
          if (row && BigInt(row.revision) > event.revision) continue
          const change = dealChange(row, event, watcher)
          if (!change) continue
          const id = formatPosition(event.position)
          const frame = change.kind === 'upsert' ? { event: 'upsert', id, data: await render(change.row) } : { event: 'delete', id, data: { id: change.id } }
          if (!(await stream.send(frame))) return
        }
      })
    }

    const watcherOf = (request: FastifyRequest): DealWatcher => {
      return viewerOfIdentity(identityOf(request))
    }

    app.get('/api/events/', { schema: { tags: ['events'], summary: "The organization's events in commit order (admins)", description: 'Follow `next` as `after` to see every event exactly once, even while writers commit out of order. Admins only: it shows every change, whoever may see the record.', querystring: FeedQuery, response: { 200: Feed, 400: ErrorBody, ...authErrors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      const page = await orgEvents(store, orgId, request.query)
      return { events: page.events.map(feedEvent), next: formatPosition(page.next), is_end: page.isEnd }
    })

    app.get('/api/stream/events/', { exposeHeadRoute: false, schema: { tags: ['events'], summary: "The organization's events, live (admins)", description: `Each event as \`event: <type>\`, \`id: <position>\`, data as in /api/events/. From the start of the log unless resumed. ${SSE_NOTE}`, querystring: StreamQuery, response: sseErrors } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const start = resumePosition(request.headers['last-event-id'], request.query.after) ?? START
      const stream = openSse(reply, closing.signal)
      await run(request, stream, start, async () => {
        for await (const event of store.subscribeToAll({ after: start, eventTypes: request.query.type, signal: stream.signal })) {
          if (event.metadata.orgId !== orgId) continue
          if (!(await stream.send({ event: event.type, id: formatPosition(event.position), data: feedEvent(event) }))) return
        }
      })
    })

    app.get('/api/stream/opportunities/', { exposeHeadRoute: false, schema: { tags: ['opportunities'], summary: 'Changes of the deals the caller may see, live', description: `\`upsert\` with the deal as a list row, or \`delete\` with its id, once the list would show the change; id: the position of the event, and the data is the deal as of that position. A deal changed several times before the stream reached it (a resume after time away) comes once, under the position of its latest change. A non-admin sees deals they created or are assigned to. Without a resume point, starts at what the list holds now: open the stream, then read the list. ${SSE_NOTE}`, querystring: StreamQuery.omit({ type: true }), response: sseErrors } }, async (request, reply) => {
      const watcher = watcherOf(request)
      const org = await lookupsOf(deps).organization(watcher.orgId)
      await streamDeals(request, reply, request.query.after, watcher, async (row) => (await opportunitiesOf(deps, { id: org.id, name: org.name }, [row], clock()))[0])
    })

    app.get('/api/stream/opportunities/kanban/', { exposeHeadRoute: false, schema: { tags: ['opportunities'], summary: "Changes of one pipeline's board, live", description: `As /api/stream/opportunities/, with cards; a deal leaving the pipeline is a \`delete\`. The default pipeline when none is given. ${SSE_NOTE}`, querystring: StreamQuery.omit({ type: true }).extend({ pipeline: z.string().optional() }), response: { ...sseErrors, 404: ErrorBody } } }, async (request, reply) => {
      const watcher = watcherOf(request)
      const given = request.query.pipeline?.trim().toLowerCase()
      if (given !== undefined && !isUuid(given)) throw new NotFoundError('Pipeline not found')
      const pipeline = await orNotFound(pipelineOf(db, watcher.orgId, given ?? (await ensureDefaultPipeline(deps, callerOf(request)))))
      const actor = { profileId: watcher.profileId, isAdmin: watcher.isAdmin, isSuperuser: false }
      await streamDeals(request, reply, request.query.after, { ...watcher, pipelineId: pipeline.id }, async (row) => (await cardsOf(deps, watcher.orgId, [row], actor, clock()))[0])
    })

    app.get('/api/stream/notifications/', { exposeHeadRoute: false, schema: { tags: ['notifications'], summary: "The caller's new notifications, live", description: `\`notification\` frames, each a notification as GET /api/notifications/ lists it, once that list holds it; id: the position of the event that made it. Not in the spec's route index: the live counterpart of the list, which the web app polls. Without a resume point, starts at what the list holds now. The organization API key has no notifications: its stream stays quiet. ${SSE_NOTE}`, querystring: StreamQuery.omit({ type: true }), response: sseErrors } }, async (request, reply) => {
      const viewer = viewerOfIdentity(identityOf(request))
      const { orgId, profileId } = viewer
      const start = resumePosition(request.headers['last-event-id'], request.query.after) ?? (await readCheckpoints(db)).find((c) => c.name === NOTIFICATIONS)?.position ?? START
      const stream = openSse(reply, closing.signal)
      await run(request, stream, start, async () => {
        // Nothing will come: the stream stays open (a closed one would be reopened at once by EventSource).
        if (profileId === null) {
          if (!stream.signal.aborted) await once(stream.signal, 'abort')
          return
        }
        for await (const event of store.subscribeToAll({ after: start, eventTypes: notificationEventTypes(recordKinds), signal: stream.signal })) {
          if (event.metadata.orgId != null && event.metadata.orgId !== orgId) continue
          if (!(await applied(event.position, stream.signal))) return
          const made = await notificationsMadeAt(db, recordKinds, { ...viewer, profileId }, event.position)
          for (const notification of await notificationBodies(db, orgId, made)) {
            if (!(await stream.send({ event: 'notification', id: formatPosition(event.position), data: notification }))) return
          }
        }
      })
    })

    app.get('/api/projections/', { schema: { tags: ['operations'], summary: "The read models' progress (admins)", description: 'Per projection: version, the version serving reads and the one being built beside it (blue-green, with progress), checkpoint, events and ms behind, the failure it is retrying; and whether this process leads.', response: { 200: Projections, ...authErrors } } }, async (request) => {
      requireAdmin(request)
      const [status, leases] = await Promise.all([projectionsStatus(db, store, projections.projectors, { failures: projections.failures }), readLeases(db)])
      const leaseOf = new Map(leases.map((lease) => [lease.name, lease]))
      return {
        leader: projections.isLeader,
        process: projections.owner,
        projections: status.projectors.map((p) => ({
          name: p.name,
          version: p.version,
          stored_version: p.storedVersion,
          building: rebuildView(p.name, p.version, projections.rebuilds),
          checkpoint: p.checkpoint,
          updated_at: p.updatedAt?.toISOString() ?? null,
          lag_events: p.lagEvents,
          lag_events_capped: p.lagEventsCapped,
          lag_ms: p.lagMs,
          lag_seconds: p.lagMs / 1000,
          unit: unitView(leaseOf.get(p.name), projections.owner),
          failure: p.failure,
        })),
        visibility: { hidden_events: status.visibility.hiddenEvents, hidden_for_ms: status.visibility.hiddenForMs, blocked_by_pid: status.visibility.blocker?.pid ?? null },
      }
    })
  }
  // Not encapsulated (what fastify-plugin does): the min_position hook and the close hook apply to the whole app.
  Object.assign(plugin, { [Symbol.for('skip-override')]: true })
  return plugin
}
