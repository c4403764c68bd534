import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { webhookDecider, webhookStream } from '../../commands/webhook/webhook.ts'
import { NotFoundError, ValidationError, orNotFound } from '../../errors.ts'
import { formatPosition } from '../../eventstore/event-store.ts'
import { listWebhooks, webhookOf } from '../../projections/webhook/webhooks.ts'
import type { WebhookRow } from '../../projections/webhook/webhooks.ts'
import { newWebhookSecret } from '../../webhooks/signing.ts'
import { refusedWebhookUrl, systemResolver } from '../../webhooks/url-policy.ts'
import { deleteWebhookSecret, deliveryOf, listDeliveries, positionOf, recordDelivery, rotateWebhookSecret, saveWebhookSecret, webhookCheckpoints } from '../../webhooks/store.ts'
import type { DeliveryRow, WebhookCheckpointRow } from '../../webhooks/store.ts'
import type { Deps } from '../../deps.ts'
import { requestCommands } from '../kernel/commands.ts'
import { requireAdmin } from '../kernel/auth.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors, iso, pageOf } from '../kernel/schemas/common.ts'

const TAGS = ['webhooks']
const errors = { ...authErrors, 404: ErrorBody }

const isHttpUrl = (text: string) => {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}
const Url = z.string().trim().max(2000).refine(isHttpUrl, 'Expected an http:// or https:// URL.').describe('http(s); unless WEBHOOK_ALLOW_PRIVATE, its host must resolve to public addresses only')
const EventTypes = z
  .array(z.string().trim().regex(/^[A-Za-z0-9_.*-]{1,100}$/, 'Expected an event type such as OpportunityCreated, or a pattern such as Opportunity*'))
  .max(50)
  .transform((types) => [...new Set(types)])
  .describe('Event type names, `*` matching any run of characters (`Opportunity*`); empty: every event of the organization')
const Secret = z
  .string()
  .min(32, 'Expected a secret of at least 32 characters (a shorter one is too easy to guess); leave it out to have one generated.')
  .max(256)
  .describe('Your own signing secret, at least 32 characters; left out, one is generated. Answered once, never stored in the event log')
/** A rotation's grace period: how long deliveries are also signed with the secret it replaces. */
const GRACE_DEFAULT_SECONDS = 24 * 60 * 60
const GRACE_MAX_SECONDS = 7 * 24 * 60 * 60
const CreateBody = z.object({ url: Url, event_types: EventTypes.default([]), secret: Secret.optional() })
const RotateBody = z.object({
  secret: Secret.optional(),
  grace_seconds: z.number().int().min(0).max(GRACE_MAX_SECONDS).default(GRACE_DEFAULT_SECONDS).describe('How long deliveries are signed with the old secret too (default a day, at most a week; 0 ends it now)'),
})
const RotatedSecret = z.object({ secret: z.string().describe('Shown only in this answer'), previous_valid_until: z.string().describe('Until then every delivery carries two signatures: `sha256=<new>, sha256=<old>`') })
const ChangeBody = z.object({ url: Url.optional(), event_types: EventTypes.optional(), is_active: z.boolean().optional().describe('true re-enables a disabled webhook: delivery resumes at its checkpoint') })

const Webhook = z.object({
  id: z.uuid(), url: z.string(), event_types: z.array(z.string()), is_active: z.boolean(), disabled_reason: z.string().nullable(),
  consecutive_failures: z.number().int(), last_error: z.string().nullable(),
  checkpoint: z.string().nullable().describe('Position of the log up to which everything for this webhook was delivered'),
  created_by: z.uuid().nullable(), created_at: z.string(), updated_at: z.string(),
})
const CreatedWebhook = Webhook.extend({ secret: z.string().describe('Shown only in this answer: verify X-Webhook-Signature with it') })
const Delivery = z.object({
  id: z.uuid(), event_id: z.uuid(), event_type: z.string(), event_position: z.string(), stream: z.string(), revision: z.number().int(),
  kind: z.enum(['delivery', 'redelivery']), attempt: z.number().int(), status: z.enum(['pending', 'succeeded', 'failed']),
  status_code: z.number().int().nullable(), error: z.string().nullable(), duration_ms: z.number().int().nullable(),
  redelivery_of: z.uuid().nullable(), created_at: z.string(), completed_at: z.string().nullable(),
})
const DeliveryParams = IdParams.extend({ delivery_id: z.uuid() })

function webhookBody(row: WebhookRow, checkpoint: WebhookCheckpointRow | undefined) {
  const current = checkpoint?.activation === row.activation
  return {
    id: row.id,
    url: row.url,
    event_types: row.event_types,
    is_active: row.is_active,
    disabled_reason: row.disabled_reason,
    consecutive_failures: current ? checkpoint.consecutive_failures : 0,
    last_error: checkpoint?.last_error ?? null,
    checkpoint: checkpoint ? formatPosition(positionOf(checkpoint)) : null,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

const deliveryBody = (row: DeliveryRow) => ({
  id: row.id,
  event_id: row.event_id,
  event_type: row.event_type,
  event_position: formatPosition(positionOf(row)),
  stream: row.stream,
  revision: Number(row.revision),
  kind: row.kind,
  attempt: row.attempt,
  status: row.status,
  status_code: row.status_code,
  error: row.error,
  duration_ms: row.duration_ms,
  redelivery_of: row.redelivery_of,
  created_at: row.created_at.toISOString(),
  completed_at: iso(row.completed_at),
})

/**
 * Webhooks (issue 8), admins only: subscriptions are event-sourced (`webhook-<id>` streams, the
 * `webhooks` read model); deliveries happen in the delivery worker (src/webhooks/dispatcher.ts),
 * never in a request: a redelivery asked for here is queued (202) and sent by the worker.
 */
export function webhookRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db, clock } = deps
  return async (app) => {
    const found = (orgId: string, id: string) => orNotFound(webhookOf(db, orgId, id))
    const withCheckpoint = async (row: WebhookRow) => webhookBody(row, (await webhookCheckpoints(db, [row.id])).get(row.id))
    // The SSRF policy needs DNS, so it runs here rather than in the zod schema; the dispatcher checks again at delivery.
    const checkTarget = async (url: string | undefined) => {
      const refused = url === undefined ? null : await refusedWebhookUrl(url, { allowPrivate: deps.config.webhookAllowPrivate, resolve: systemResolver })
      if (refused) throw new ValidationError({ url: [refused] })
    }

    app.get('/api/webhooks/', { schema: { tags: TAGS, summary: 'Webhooks of the organization (admins)', querystring: PageQuery, response: { 200: pageOf(Webhook), ...authErrors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      const { limit, offset } = request.query
      const { count, rows } = await listWebhooks(db, orgId, { limit, offset })
      const checkpoints = await webhookCheckpoints(db, rows.map((r) => r.id))
      return { count, offset, limit, results: rows.map((row) => webhookBody(row, checkpoints.get(row.id))) }
    })

    app.post(
      '/api/webhooks/',
      { schema: { tags: TAGS, summary: 'Create a webhook (admins); the answer carries its signing secret, once', description: 'Every event of the organization appended from now on whose type matches `event_types` is POSTed as JSON `{id, type, position, stream, revision, data, at}`, in log order, at least once, with `X-Webhook-Timestamp` and `X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>` (two, comma-separated, during the grace period of a secret rotation).', body: CreateBody, response: { 201: CreatedWebhook, 400: ErrorBody, ...authErrors } } },
      async (request, reply) => {
        const identity = requireAdmin(request)
        await checkTarget(request.body.url)
        const commands = requestCommands(deps, request, reply)
        const webhookId = randomUUID()
        const secret = request.body.secret ?? newWebhookSecret()
        await saveWebhookSecret(db, webhookId, identity.orgId, secret)
        const { url, event_types } = request.body
        await commands.run(webhookDecider, webhookStream(webhookId), { type: 'CreateWebhook', webhookId, orgId: identity.orgId, url, eventTypes: event_types, actorId: identity.profileId, at: clock().toISOString() })
        await commands.settle()
        return reply.code(201).send({ ...(await withCheckpoint(await found(identity.orgId, webhookId))), secret })
      },
    )

    app.post(
      '/api/webhooks/:id/rotate-secret/',
      { schema: { tags: TAGS, summary: "Replace a webhook's signing secret (admins); the old one keeps signing for a grace period", description: 'The new secret (yours, at least 32 characters, or generated) signs every delivery from now on. Until `previous_valid_until`, deliveries carry both signatures in X-Webhook-Signature, `sha256=<new>, sha256=<old>`, so receivers switch over without losing one; verify against any of them.', params: IdParams, body: RotateBody, response: { 200: RotatedSecret, 400: ErrorBody, ...errors } } },
      async (request) => {
        const { orgId } = requireAdmin(request)
        const hook = await found(orgId, request.params.id)
        const secret = request.body.secret ?? newWebhookSecret()
        const previousValidUntil = new Date(clock().getTime() + request.body.grace_seconds * 1000)
        await rotateWebhookSecret(db, hook.id, secret, previousValidUntil)
        return { secret, previous_valid_until: previousValidUntil.toISOString() }
      },
    )

    app.get('/api/webhooks/:id/', { schema: { tags: TAGS, summary: 'One webhook (admins)', params: IdParams, response: { 200: Webhook, ...errors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      return withCheckpoint(await found(orgId, request.params.id))
    })

    app.put('/api/webhooks/:id/', { schema: { tags: TAGS, summary: 'Change a webhook\'s URL or event types, disable or re-enable it (admins)', description: 'Fields left out keep their values.', params: IdParams, body: ChangeBody, response: { 200: Webhook, 400: ErrorBody, ...errors } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const { url, event_types, is_active } = request.body
      await checkTarget(url)
      const commands = requestCommands(deps, request, reply)
      await commands.run(webhookDecider, webhookStream(current.id), { type: 'ChangeWebhook', orgId, url, eventTypes: event_types, isActive: is_active, at: clock().toISOString() })
      await commands.settle()
      return withCheckpoint(await found(orgId, current.id))
    })

    app.delete('/api/webhooks/:id/', { schema: { tags: TAGS, summary: 'Delete a webhook (admins): delivery stops; its log stays', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const { orgId } = requireAdmin(request)
      const current = await found(orgId, request.params.id)
      const commands = requestCommands(deps, request, reply)
      await commands.run(webhookDecider, webhookStream(current.id), { type: 'DeleteWebhook', orgId, at: clock().toISOString() })
      await deleteWebhookSecret(db, current.id)
      await commands.settle()
      return { error: false as const, message: 'Webhook deleted' }
    })

    app.get('/api/webhooks/:id/deliveries/', { schema: { tags: TAGS, summary: 'Delivery attempts of a webhook, newest first (admins)', params: IdParams, querystring: PageQuery, response: { 200: pageOf(Delivery), ...errors } } }, async (request) => {
      const { orgId } = requireAdmin(request)
      const hook = await found(orgId, request.params.id)
      const { limit, offset } = request.query
      const { count, rows } = await listDeliveries(db, hook.id, { limit, offset })
      return { count, offset, limit, results: rows.map(deliveryBody) }
    })

    app.post(
      '/api/webhooks/:id/deliveries/:delivery_id/redeliver/',
      { schema: { tags: TAGS, summary: 'Send a delivery\'s event once more (admins): queued, answered 202', description: 'The delivery worker sends it soon, whatever the checkpoint, and records the outcome in the returned delivery (kind `redelivery`, status `pending` until then).', params: DeliveryParams, response: { 202: Delivery, ...errors } } },
      async (request, reply) => {
        const { orgId } = requireAdmin(request)
        const hook = await found(orgId, request.params.id)
        const original = await deliveryOf(db, hook.id, request.params.delivery_id)
        if (!original) throw new NotFoundError()
        const event = { id: original.event_id, type: original.event_type, streamName: original.stream, revision: BigInt(original.revision), position: positionOf(original) }
        const queued = await recordDelivery(db, { id: randomUUID(), webhookId: hook.id, orgId, event, kind: 'redelivery', attempt: 1, status: 'pending', redeliveryOf: original.id })
        return reply.code(202).send(deliveryBody(queued))
      },
    )
  }
}
