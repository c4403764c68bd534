import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import { handleCommand } from '../commands/handle-command.ts'
import { webhookDecider, webhookStream } from '../commands/webhook/webhook.ts'
import type { Database } from '../db/database.ts'
import { comparePositions } from '../eventstore/event-store.ts'
import type { EventStore, Position, RecordedEvent } from '../eventstore/event-store.ts'
import { createWakeup, delay } from '../eventstore/wakeup.ts'
import { activeWebhooks, createdPositionOf, webhookById, webhooksProjector } from '../projections/webhook/webhooks.ts'
import type { WebhookRow } from '../projections/webhook/webhooks.ts'
import { createHttpSender } from './http-sender.ts'
import type { Sender } from './http-sender.ts'
import { DEFAULT_PRUNE, pruneDeliveries } from './pruning.ts'
import type { PrunePolicy } from './pruning.ts'
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, signatureHeader } from './signing.ts'
import { completeDelivery, pendingRedeliveries, positionOf, recordDelivery, saveWebhookCheckpoint, webhookCheckpoint, webhookSecrets } from './store.ts'
import type { DeliveryRow } from './store.ts'
import { DEFAULT_RETRY, backoffMs, deliveryBody, typeMatcher, wants } from './delivery-rules.ts'
import type { RetryPolicy } from './delivery-rules.ts'
import { ForbiddenTargetError, systemResolver } from './url-policy.ts'
import type { TargetPolicy } from './url-policy.ts'

export type WebhookDispatcherOptions = {
  db: Kysely<Database>
  store: EventStore
  logger: Logger
  /** How a delivery is POSTed; by default node:http(s) under the target policy. */
  send?: Sender
  /** Which addresses deliveries may reach (default: public ones only, resolved by the system resolver). */
  targets?: Partial<TargetPolicy>
  /** How the delivery log is kept bounded (default: the newest 1000 per webhook). */
  prune?: Partial<PrunePolicy>
  clock?: () => Date
  retry?: Partial<RetryPolicy>
  /** Polling fallback when no append notification arrives. */
  pollMs?: number
  /** Events read from the log per page, per subscription. */
  batchSize?: number
  /** A receiver that has not answered within this long has failed the attempt. */
  timeoutMs?: number
  /** How often a process that does not deliver tries to take over. */
  leaderRetryMs?: number
}

export type WebhookDispatcher = {
  readonly isLeader: boolean
  /** Delivers in the background, once the webhooks read model exists (nothing is read before). */
  start(): void
  stop(): Promise<void>
}

// Another key than the projections' lock ("crm_proj"): a process may lead both, or one each.
const LOCK_KEY = String(0x63726d5f77656268n) // "crm_webh"
const REDELIVERIES_PER_TICK = 20
/** A subscription's checkpoint may lag this long behind stretches of events that are not for it. */
const CHECKPOINT_IDLE_MS = 1000
const MAX_ERROR_LENGTH = 500

/** `refused`: the target policy refused the address; no retry can help, so the subscription is disabled. */
type Outcome = { ok: boolean; statusCode: number | null; error: string | null; durationMs: number; refused?: boolean }

/**
 * Delivers the organizations' events to their webhook subscriptions, outside any request: a
 * consumer of the log like a projector. It starts once the webhooks read model exists (on a fresh
 * database the projections leader builds it after the migrations). One process per database
 * delivers (a PostgreSQL advisory lock held on one pooled connection). Each active subscription
 * follows the log from its own checkpoint in log order and moves it only after a 2xx
 * (at-least-once), never skipping a failed event (so per-stream order holds); failures are
 * retried with exponential backoff and, after `maxFailures` in a row, disable the subscription.
 * Subscriptions deliver independently of each other. Redeliveries requested through the API are
 * pending rows of the delivery log, sent here.
 */
export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const { db, store } = options
  const send = options.send ?? createHttpSender({ allowPrivate: false, resolve: systemResolver, ...options.targets })
  const prune: PrunePolicy = { ...DEFAULT_PRUNE, ...options.prune }
  const clock = options.clock ?? (() => new Date())
  const retry: RetryPolicy = { ...DEFAULT_RETRY, ...options.retry }
  const pollMs = options.pollMs ?? 500
  const batchSize = options.batchSize ?? 200
  const timeoutMs = options.timeoutMs ?? 10_000
  const leaderRetryMs = options.leaderRetryMs ?? 5000
  const log = options.logger.child({ component: 'webhooks' })
  const stopping = new AbortController()
  let running: Promise<void> | undefined
  let leader = false

  // The secrets are read at each delivery, so a rotation signs the very next one with both.
  async function post(hook: WebhookRow, event: RecordedEvent, deliveryId: string, signal: AbortSignal): Promise<Outcome> {
    const body = deliveryBody(event)
    const now = clock()
    const timestamp = String(Math.floor(now.getTime() / 1000))
    const secrets = await webhookSecrets(db, hook.id, now)
    const started = Date.now()
    try {
      const response = await send(hook.url, {
        body,
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'crm-deals-webhooks/1',
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: signatureHeader(secrets, timestamp, body),
          'x-webhook-id': hook.id,
          'x-webhook-delivery-id': deliveryId,
          'x-webhook-event-id': event.id,
          'x-webhook-event-type': event.type,
        },
      })
      const ok = response.status >= 200 && response.status < 300
      const error = ok ? null : `HTTP ${response.status}${response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''}`
      return { ok, statusCode: response.status, error, durationMs: Date.now() - started }
    } catch (error) {
      if (error instanceof ForbiddenTargetError) return { ok: false, statusCode: null, error: `Refused: ${error.message}`.slice(0, MAX_ERROR_LENGTH), durationMs: Date.now() - started, refused: true }
      const message = error instanceof Error ? `${error.name}: ${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}` : String(error)
      return { ok: false, statusCode: null, error: message.slice(0, MAX_ERROR_LENGTH), durationMs: Date.now() - started }
    }
  }

  /** One leadership term: the lock's connection is checked every tick, so losing it ends the term. */
  async function serve(lockConnection: Kysely<Database>): Promise<void> {
    const term = new AbortController()
    const endTerm = () => term.abort()
    stopping.signal.addEventListener('abort', endTerm, { once: true })
    const kicks = new Set<() => void>()
    const wakeup = createWakeup((listener) => {
      const unsubscribe = store.onAppended(listener)
      kicks.add(listener)
      return () => {
        unsubscribe()
        kicks.delete(listener)
      }
    })
    const kick = () => kicks.forEach((k) => k())
    const busy = new Map<string, Promise<void>>()
    const retryAt = new Map<string, number>()
    const cursors = new Map<string, { position: Position; savedAt: number }>()
    /** Subscriptions this term disabled, by activation: skipped until the read model shows it. */
    const disabled = new Map<string, number>()

    const runOnce = (key: string, work: () => Promise<void>) => {
      if (busy.has(key)) return
      const job = work()
        .catch((error: unknown) => {
          log.error({ err: error, job: key }, 'webhook delivery failed; retrying')
          retryAt.set(key, Date.now() + retry.baseMs)
        })
        .finally(() => {
          busy.delete(key)
          kick()
        })
      busy.set(key, job)
    }

    async function follow(id: string): Promise<void> {
      let hook = await webhookById(db, id)
      if (!hook || !(await webhookSecrets(db, id, clock())).length) return
      const stored = await webhookCheckpoint(db, id)
      let cursor = cursors.get(id)?.position ?? (stored ? positionOf(stored) : createdPositionOf(hook))
      let failures = stored && stored.activation === hook.activation ? stored.consecutive_failures : 0
      const save = async (lastError: string | null) => {
        await saveWebhookCheckpoint(db, id, { position: cursor, activation: hook!.activation, failures, lastError })
        cursors.set(id, { position: cursor, savedAt: Date.now() })
      }
      while (!term.signal.aborted && hook?.is_active && disabled.get(id) !== hook.activation) {
        const matches = typeMatcher(hook.event_types)
        const page = await store.readAll({ after: cursor, maxCount: batchSize })
        for (const event of page.events) {
          if (!wants(hook, matches, event)) continue
          const deliveryId = randomUUID()
          const outcome = await post(hook, event, deliveryId, term.signal)
          if (term.signal.aborted && !outcome.ok) return
          await recordDelivery(db, { id: deliveryId, webhookId: id, orgId: hook.org_id, event, kind: 'delivery', attempt: failures + 1, status: outcome.ok ? 'succeeded' : 'failed', statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs })
          if (!outcome.ok) {
            failures += 1
            await save(outcome.error)
            if (outcome.refused) return disable(hook, failures, `Disabled: ${outcome.error}`)
            if (failures >= retry.maxFailures) return disable(hook, failures, `Disabled after ${failures} consecutive failed deliveries (last: ${outcome.error ?? 'unknown'})`)
            retryAt.set(id, Date.now() + backoffMs(retry, failures))
            return
          }
          failures = 0
          cursor = event.position
          await save(null)
        }
        if (comparePositions(page.scannedTo, cursor) > 0) {
          cursor = page.scannedTo
          if (Date.now() - (cursors.get(id)?.savedAt ?? 0) >= CHECKPOINT_IDLE_MS) await save(null)
          else cursors.set(id, { position: cursor, savedAt: cursors.get(id)?.savedAt ?? 0 })
        }
        if (page.isEnd) return
        hook = await webhookById(db, id)
      }
    }

    async function disable(hook: WebhookRow, failures: number, reason: string): Promise<void> {
      disabled.set(hook.id, hook.activation)
      log.warn({ webhookId: hook.id, orgId: hook.org_id, failures, reason }, 'webhook disabled')
      await handleCommand(store, webhookDecider, webhookStream(hook.id), { type: 'DisableWebhook', orgId: hook.org_id, activation: hook.activation, reason, failures, at: clock().toISOString() }, { metadata: { actorId: null, orgId: hook.org_id } })
    }

    async function redeliver(row: DeliveryRow): Promise<void> {
      const hook = await webhookById(db, row.webhook_id)
      const signs = (await webhookSecrets(db, row.webhook_id, clock())).length > 0
      const [event] = await store.readStream(row.stream, { fromRevision: BigInt(row.revision), maxCount: 1 })
      if (!hook || !signs || !event || event.id !== row.event_id) {
        await completeDelivery(db, row.id, { status: 'failed', statusCode: null, error: hook ? 'The event is no longer in the log' : 'The webhook was deleted', durationMs: 0 })
        return
      }
      const outcome = await post(hook, event, row.id, term.signal)
      if (term.signal.aborted && !outcome.ok) return
      await completeDelivery(db, row.id, { status: outcome.ok ? 'succeeded' : 'failed', statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs })
    }

    const redeliverPending = async () => {
      for (const row of await pendingRedeliveries(db, REDELIVERIES_PER_TICK)) {
        if (term.signal.aborted) return
        await redeliver(row)
      }
    }

    // One batch per turn; the next turn comes at once while a backlog remains, else after everyMs.
    const pruneLog = async () => {
      const deleted = await pruneDeliveries(db, prune, clock())
      retryAt.set('prune', Date.now() + (deleted >= prune.batchSize ? 0 : prune.everyMs))
    }

    try {
      while (!term.signal.aborted) {
        wakeup.arm()
        await sql`SELECT 1`.execute(lockConnection)
        const now = Date.now()
        for (const [key, at] of retryAt) if (at <= now) retryAt.delete(key)
        for (const hook of await activeWebhooks(db)) {
          if (!retryAt.has(hook.id) && disabled.get(hook.id) !== hook.activation) runOnce(hook.id, () => follow(hook.id))
        }
        if (!retryAt.has('redeliveries')) runOnce('redeliveries', redeliverPending)
        if (!retryAt.has('prune')) runOnce('prune', pruneLog)
        const nextRetry = Math.min(...retryAt.values()) - Date.now()
        await wakeup.sleep(Math.max(1, Math.min(pollMs, nextRetry)), term.signal)
      }
    } finally {
      term.abort()
      stopping.signal.removeEventListener('abort', endTerm)
      await Promise.allSettled(busy.values())
      wakeup.close()
    }
  }

  /**
   * Subscriptions are listed from the webhooks read model, whose table the projections leader
   * (this process or another) creates on a first start, after the migrations: its checkpoint row is
   * written in the same transaction as the table. Until the row is there, nothing is read and the
   * lock is not taken. Once built, the table only ever changes by an atomic swap, so one wait per
   * process is enough.
   */
  async function untilReadModelExists(): Promise<void> {
    let told = false
    while (!stopping.signal.aborted) {
      try {
        const built = await db.selectFrom('projection_checkpoints').select('name').where('name', '=', webhooksProjector.name).executeTakeFirst()
        if (built) return
        if (!told) log.info('waiting for the webhooks read model to be built before delivering')
        told = true
      } catch (error) {
        if (!stopping.signal.aborted) log.error({ err: error }, 'could not tell whether the webhooks read model exists; trying again')
      }
      await delay(pollMs, stopping.signal)
    }
  }

  async function lead(): Promise<void> {
    await untilReadModelExists()
    while (!stopping.signal.aborted) {
      try {
        await db.connection().execute(async (connection) => {
          const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${LOCK_KEY}::bigint) AS locked`.execute(connection)
          if (!rows[0]?.locked) return
          leader = true
          log.info('this process now delivers webhooks')
          try {
            await serve(connection)
          } finally {
            leader = false
            await sql`SELECT pg_advisory_unlock(${LOCK_KEY}::bigint)`.execute(connection).catch(() => {})
          }
        })
      } catch (error) {
        if (!stopping.signal.aborted) log.error({ err: error }, 'webhook delivery stopped; trying again')
      }
      await delay(leaderRetryMs, stopping.signal)
    }
  }

  return {
    get isLeader() {
      return leader
    },
    start() {
      running ??= lead()
    },
    async stop() {
      stopping.abort()
      await running
    },
  }
}
