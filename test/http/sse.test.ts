import { Writable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import t from 'tap'
import { frameText, openSse, resumePosition } from '../../src/http/kernel/sse.ts'

/** A hijackable reply over a socket stand-in whose peer reads while `peer.reading`, and else never. */
function fakeReply(highWaterMark: number) {
  const peer = { reading: true }
  const raw = Object.assign(
    new Writable({
      highWaterMark,
      write(_chunk, _encoding, callback) {
        if (peer.reading) setImmediate(callback)
      },
    }),
    { head: undefined as unknown, writeHead(status: number, headers: object) {
      raw.head = { status, headers }
      return raw
    } },
  )
  const reply = { raw, hijack: () => reply, getHeaders: () => ({ 'x-request-id': 'r1' }) }
  return { reply: reply as unknown as FastifyReply, raw, peer }
}

const options = { heartbeatMs: 20, drainTimeoutMs: 50, maxBufferedBytes: 10_000 }

t.test('frames: event, id, one data line of JSON', async (t) => {
  t.equal(frameText({ event: 'upsert', id: '5-1', data: { a: 'x\ny' } }), 'event: upsert\nid: 5-1\ndata: {"a":"x\\ny"}\n\n')
  t.equal(frameText({ event: 'ready', data: 1 }), 'event: ready\ndata: 1\n\n')
})

t.test('a client that keeps up gets every frame; one that stops reading is disconnected', async (t) => {
  const { reply, raw, peer } = fakeReply(64)
  const stream = openSse(reply, new AbortController().signal, options)
  t.match(raw.head, { status: 200, headers: { 'content-type': /text\/event-stream/, 'x-request-id': 'r1' } })
  const big = 'x'.repeat(100)
  t.equal(await stream.send({ event: 'e', id: '1-1', data: big }), true, 'over the high-water mark, then drained: sent')
  peer.reading = false
  t.equal(await stream.send({ event: 'e', id: '1-2', data: big }), false, 'no drain within the bound: the stream ends')
  t.equal(stream.signal.aborted, true)
  t.equal(raw.destroyed, true, 'the connection is dropped, not gracefully ended behind a full buffer')
  t.equal(await stream.send({ event: 'e', data: 1 }), false, 'nothing more is sent')
})

t.test('more than maxBufferedBytes queued ends the stream at once', async (t) => {
  const { reply, raw } = fakeReply(1_000_000)
  const stream = openSse(reply, new AbortController().signal, options)
  t.equal(await stream.send({ event: 'e', data: 'x'.repeat(20_000) }), false)
  t.equal(raw.destroyed, true)
})

t.test('heartbeats while idle; the closing signal ends the stream', async (t) => {
  const { reply, raw } = fakeReply(1_000_000)
  const written: string[] = []
  const write = raw.write.bind(raw)
  raw.write = ((chunk: string) => {
    written.push(chunk)
    return write(chunk)
  }) as typeof raw.write
  const closing = new AbortController()
  const stream = openSse(reply, closing.signal, options)
  await new Promise((resolve) => setTimeout(resolve, 70))
  t.ok(written.filter((w) => w === ': keep-alive\n\n').length >= 2)
  closing.abort()
  t.equal(stream.signal.aborted, true)
  t.equal(raw.writableEnded || raw.destroyed, true)
})

t.test('resume point: Last-Event-ID wins over ?after=; a malformed one is a 400', async (t) => {
  const after = { commit: 1n, prepare: 2n }
  t.same(resumePosition(undefined, after), after)
  t.same(resumePosition('', after), after)
  t.same(resumePosition('7-3', after), { commit: 7n, prepare: 3n })
  t.throws(() => resumePosition('x', after), { statusCode: 400, message: /last-event-id/ })
})
