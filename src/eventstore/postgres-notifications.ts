import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { endQuietly } from '../db/quiet-end.ts'

/** Appends to the event log; each process applying projection units announces what they reached on CHECKPOINT_CHANNEL. */
const CHANNEL = 'crm_events'
export const CHECKPOINT_CHANNEL = 'crm_checkpoints'
const RECONNECT_MS = 1000

export type Notifications = {
  /**
   * Called after a local commit: wakes local listeners now, other processes through NOTIFY. A
   * `message` (e.g. the position a process's projection units have reached) travels with it; when
   * several are sent meanwhile, the latest is what the coalesced NOTIFY carries.
   */
  appended(message?: string): void
  /**
   * For a message that goes out in a transaction of the caller's rather than in a NOTIFY of its own:
   * `statement` is the NOTIFY's SQL text (its values inlined), delivered when that transaction
   * commits; call `committed` once it has, which wakes local listeners as `appended` does.
   */
  within(message: string): { statement: string; committed(): void }
  subscribe(listener: (message: string | undefined) => void): () => void
  /** Whether other processes' notifications reach this one now: LISTEN is in place (false before the first subscription). */
  listening(): boolean
  close(): Promise<void>
}

/**
 * Wake-ups for subscribers. NOTIFY is deliberately not part of the append statement: a notifying
 * commit takes a cluster-wide lock, which would serialize appends and defeat group commit. Instead
 * each process coalesces its appends into at most one NOTIFY in flight, sent after they committed,
 * and other processes LISTEN on a dedicated connection (started on first subscription).
 */
export function startNotifications(pool: pg.Pool, channel = CHANNEL): Notifications {
  const instanceId = randomUUID()
  const listeners = new Set<(message: string | undefined) => void>()
  let closed = false
  let listenClient: pg.Client | null = null
  let listeningNow = false
  let reconnectTimer: NodeJS.Timeout | undefined
  let notifying: Promise<void> | null = null
  let notifyAgain = false
  let latest: string | undefined

  const fire = (message?: string) => {
    for (const listener of [...listeners]) listener(message)
  }

  async function sendNotifications(): Promise<void> {
    do {
      notifyAgain = false
      const payload = latest === undefined ? instanceId : `${instanceId} ${latest}`
      // Lost notifications only cost latency: every subscriber also polls.
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]).catch(() => {})
    } while (notifyAgain && !closed)
    notifying = null
  }

  function appended(message?: string): void {
    latest = message
    fire(message)
    if (closed) return
    if (notifying) notifyAgain = true
    else notifying = sendNotifications()
  }

  function within(message: string): { statement: string; committed(): void } {
    return {
      statement: `SELECT pg_notify(${pg.escapeLiteral(channel)}, ${pg.escapeLiteral(`${instanceId} ${message}`)})`,
      committed() {
        latest = message
        fire(message)
      },
    }
  }

  async function listen(): Promise<void> {
    if (closed || listenClient) return
    const client = new pg.Client({ ...pool.options, application_name: 'crm-deals-listener' })
    listenClient = client
    // Once per client: a dropped connection may report both an error and its end.
    const retry = () => {
      if (listenClient !== client) return
      listenClient = null
      listeningNow = false
      void endQuietly(client)
      if (!closed) reconnectTimer = setTimeout(() => void listen(), RECONNECT_MS)
    }
    client.on('error', retry)
    client.on('end', retry)
    client.on('notification', (notification) => {
      const [sender, ...message] = (notification.payload ?? '').split(' ')
      if (sender !== instanceId) fire(message.length ? message.join(' ') : undefined)
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${channel}`)
      listeningNow = listenClient === client
      // Anything committed while we were not listening is picked up by the wake-up itself.
      fire()
    } catch {
      retry()
    }
  }

  function subscribe(listener: (message: string | undefined) => void): () => void {
    listeners.add(listener)
    void listen()
    return () => listeners.delete(listener)
  }

  async function close(): Promise<void> {
    closed = true
    listeningNow = false
    clearTimeout(reconnectTimer)
    await notifying
    const client = listenClient
    listenClient = null
    if (client) await endQuietly(client)
  }

  return { appended, within, subscribe, listening: () => listeningNow, close }
}
