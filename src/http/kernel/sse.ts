import type { FastifyReply } from 'fastify'
import { parsePosition } from '../../eventstore/event-store.ts'
import type { Position } from '../../eventstore/event-store.ts'
import { ValidationError } from '../../errors.ts'

/**
 * Server-Sent Events over a hijacked reply. Frames are written whole from one event loop turn, so a
 * heartbeat never splits an event. Backpressure: a write the socket cannot take waits for 'drain',
 * and a client that stays behind (no drain within `drainTimeoutMs`, or more than `maxBufferedBytes`
 * queued) loses the connection: it reconnects with Last-Event-ID and misses nothing.
 */
export type SseOptions = {
  /** A comment line every so often keeps proxies from closing an idle stream. */
  heartbeatMs: number
  drainTimeoutMs: number
  maxBufferedBytes: number
}

/** The settings every stream reads when it opens; tests shorten them. */
export const sseSettings: SseOptions = { heartbeatMs: 15_000, drainTimeoutMs: 10_000, maxBufferedBytes: 1024 * 1024 }

export type SseFrame = { event: string; id?: string; data: unknown }

export type SseStream = {
  /** Aborts when the client goes away, the stream is ended, or the app closes. */
  readonly signal: AbortSignal
  /** Resolves false once the stream is over (the frame was not sent). */
  send(frame: SseFrame): Promise<boolean>
  end(): void
}

const HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' }

export function frameText({ event, id, data }: SseFrame): string {
  const lines = JSON.stringify(data).split('\n').map((line) => `data: ${line}`)
  return `event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}${lines.join('\n')}\n\n`
}

/** Takes over the reply (headers already set on it, e.g. x-request-id, are kept) and starts the heartbeat. */
export function openSse(reply: FastifyReply, closing: AbortSignal, options: SseOptions = sseSettings): SseStream {
  const res = reply.raw
  const done = new AbortController()
  reply.hijack()
  res.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...HEADERS })
  res.write(': stream open\n\n')
  let draining = false

  const end = () => {
    if (done.signal.aborted) return
    done.abort()
    clearInterval(heartbeat)
    closing.removeEventListener('abort', end)
    if (draining || res.writableLength > 0) res.destroy()
    else res.end()
  }
  const heartbeat = setInterval(() => {
    if (!draining && !done.signal.aborted) write(': keep-alive\n\n')
  }, options.heartbeatMs)
  res.on('close', end)
  closing.addEventListener('abort', end, { once: true })

  function write(text: string): boolean {
    const fits = res.write(text)
    if (res.writableLength > options.maxBufferedBytes) end()
    return fits
  }

  function drained(): Promise<boolean> {
    draining = true
    return new Promise((resolve) => {
      const finish = (ok: boolean) => {
        clearTimeout(timer)
        res.off('drain', onDrain)
        done.signal.removeEventListener('abort', onAbort)
        draining = false
        resolve(ok)
      }
      const onDrain = () => finish(true)
      const onAbort = () => finish(false)
      const timer = setTimeout(() => {
        finish(false)
        end()
      }, options.drainTimeoutMs)
      res.on('drain', onDrain)
      done.signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  return {
    signal: done.signal,
    end,
    async send(frame) {
      if (done.signal.aborted) return false
      if (write(frameText(frame))) return !done.signal.aborted
      if (done.signal.aborted) return false
      return (await drained()) && !done.signal.aborted
    },
  }
}

/** The resume point of a stream: the Last-Event-ID header (a reconnect) wins over `?after=`. */
export function resumePosition(lastEventId: string | string[] | undefined, after: Position | undefined): Position | undefined {
  const header = Array.isArray(lastEventId) ? lastEventId.at(-1) : lastEventId
  if (header === undefined || header.trim() === '') return after
  const position = parsePosition(header)
  if (!position) throw new ValidationError({ 'last-event-id': ['Expected a position such as 1234-5'] })
  return position
}
