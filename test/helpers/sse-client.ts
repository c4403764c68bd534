/** A Server-Sent Events client over fetch, for tests: collects frames and comment lines as they arrive. */
export type SseFrame = { event: string; id: string | undefined; data: unknown }

export type SseClient = {
  status: number
  headers: Headers
  frames: SseFrame[]
  comments: string[]
  /** Resolves once `done(frames)` holds; rejects after `timeoutMs`. */
  until(done: (frames: SseFrame[]) => boolean, timeoutMs?: number): Promise<SseFrame[]>
  /** Resolves when the server ended the stream. */
  ended: Promise<void>
  close(): void
}

function parseFrame(block: string): SseFrame | string | undefined {
  const fields: Record<string, string[]> = {}
  let comment: string | undefined
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) comment = line.slice(1).trim()
    else {
      const at = line.indexOf(':')
      const [name, value] = at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1).replace(/^ /, '')]
      ;(fields[name] ??= []).push(value)
    }
  }
  if (!fields.data) return comment
  return { event: fields.event?.at(-1) ?? 'message', id: fields.id?.at(-1), data: JSON.parse(fields.data.join('\n')) }
}

export async function openSseClient(url: string, headers: Record<string, string>): Promise<SseClient> {
  const abort = new AbortController()
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal })
  const frames: SseFrame[] = []
  const comments: string[] = []
  const waiters = new Set<() => void>()
  const ended = (async () => {
    if (!response.body) return
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ''
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        buffer += value
        let cut: number
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const parsed = parseFrame(buffer.slice(0, cut))
          buffer = buffer.slice(cut + 2)
          if (typeof parsed === 'string') comments.push(parsed)
          else if (parsed) frames.push(parsed)
        }
        for (const wake of waiters) wake()
      }
    } catch {
      // Closed by us (abort) or by the server.
    } finally {
      for (const wake of waiters) wake()
    }
  })()
  let over = false
  void ended.then(() => (over = true))
  return {
    status: response.status,
    headers: response.headers,
    frames,
    comments,
    ended,
    close: () => abort.abort(),
    until: (done, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (done(frames)) {
            finish()
            resolve(frames)
          } else if (over) {
            finish()
            reject(new Error(`stream ended before the condition held; got ${JSON.stringify(frames.map((f) => [f.event, f.id]))}`))
          }
        }
        const timer = setTimeout(() => {
          finish()
          reject(new Error(`timed out; got ${JSON.stringify(frames.map((f) => [f.event, f.id]))}`))
        }, timeoutMs)
        const finish = () => {
          clearTimeout(timer)
          waiters.delete(check)
        }
        waiters.add(check)
        void ended.then(check)
        check()
      }),
  }
}
