/**
 * Issue 20, every core: WEB_CONCURRENCY=2 runs two API workers on one port (node:cluster). Exactly
 * one of them leads the projections; a read that names the X-Event-Position of a write made on the
 * other worker sees that write (read-your-writes across workers); a dead worker is replaced; SIGTERM
 * drains both and the primary exits 0. Every request goes on a new connection, which the primary
 * hands to the workers in turn; which worker answered is read from its log line (pid by request id).
 */
import { randomUUID } from 'node:crypto'
import { request } from 'node:http'
import t from 'tap'
import { freshDatabase } from '../helpers/db.ts'
import { eventually, givenAdmin, startServer } from './harness.ts'
import type { Server } from './harness.ts'

type Answer = { status: number; body: any; headers: Record<string, string | string[] | undefined>; pid: number }

/** One call on a connection of its own (no keep-alive), and the pid of the worker that logged its request id. */
async function callOnNewConnection(server: Server, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const id = `wc-${randomUUID()}`
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const answer = await new Promise<Omit<Answer, 'pid'>>((resolve, reject) => {
    const headers = { authorization: `Bearer ${token}`, 'x-request-id': id, ...(payload ? { 'content-type': 'application/json' } : {}) }
    const req = request(`${server.base}${path}`, { method, headers, agent: false }, (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: res.headers }))
    })
    req.on('error', reject)
    req.end(payload)
  })
  const pid = await eventually(`the log line of request ${id}`, 5_000, async () => pidOfRequest(server.output(), id), 20)
  return { ...answer, pid }
}

function pidOfRequest(output: string, requestId: string): number | undefined {
  const line = output.split('\n').find((l) => l.includes(`"reqId":"${requestId}"`))
  return line ? (JSON.parse(line) as { pid: number }).pid : undefined
}

/** The workers answering now, each with whether it leads the projections (asked until two answer, or fails). */
async function workersAndLeadership(server: Server, token: string): Promise<Map<number, boolean>> {
  const seen = new Map<number, boolean>()
  await eventually('two workers answer GET /api/projections/, one of them leading', 30_000, async () => {
    const answer = await callOnNewConnection(server, token, 'GET', '/api/projections/')
    if (answer.status === 200) seen.set(answer.pid, answer.body.leader as boolean)
    return seen.size >= 2 && [...seen.values()].includes(true)
  }, 50)
  return seen
}

t.test('WEB_CONCURRENCY=2: two workers on one port, one leader, read-your-writes across them, restart and drain', async (t) => {
  const { url, db } = await freshDatabase(t)
  const admin = await givenAdmin(db)
  const server = await startServer(t, url, { WEB_CONCURRENCY: '2' })
  await eventually('both workers listen', 30_000, async () => (server.output().match(/Server listening at/g)?.length ?? 0) >= 2)

  const workers = await workersAndLeadership(server, admin.token)
  t.equal(workers.size, 2, 'two worker processes answer on the one port')
  t.notOk(workers.has(server.child.pid!), 'the primary serves nothing itself')
  t.equal([...workers.values()].filter(Boolean).length, 1, `exactly one worker leads: ${JSON.stringify([...workers])}`)

  // Writes on one worker, reads naming their position on the other, both ways round.
  const directions = new Set<string>()
  for (let i = 0; i < 20 && directions.size < 2; i++) {
    // The primary deals connections in turn: an extra call every other round swaps which worker writes.
    if (i % 2) await callOnNewConnection(server, admin.token, 'GET', '/api/projections/')
    const name = `Cross-worker deal ${i}`
    const write = await callOnNewConnection(server, admin.token, 'POST', '/api/opportunities/', { name, amount: '10.00' })
    t.equal(write.status, 200, `write ${i} answers 200`)
    const position = write.headers['x-event-position']
    const read = await callOnNewConnection(server, admin.token, 'GET', `/api/opportunities/${write.body.id}/?min_position=${position}`)
    t.match({ status: read.status, name: read.body?.opportunity_obj?.name }, { status: 200, name }, `read ${i}, naming position ${position}, sees write ${i}`)
    if (read.pid !== write.pid) directions.add(workers.get(write.pid) ? 'leader → follower' : 'follower → leader')
  }
  t.same([...directions].sort(), ['follower → leader', 'leader → follower'], 'reads on the other worker, both ways round')

  // A dead worker is replaced by a new one; leadership settles on one of the two then serving.
  const [leaderPid] = [...workers].find(([, leads]) => leads)!
  process.kill(leaderPid, 'SIGKILL')
  await eventually('a third worker starts', 30_000, async () => (server.output().match(/Server listening at/g)?.length ?? 0) >= 3)
  const after = await workersAndLeadership(server, admin.token)
  t.notOk(after.has(leaderPid), 'the killed worker answers no more')
  t.equal([...after.values()].filter(Boolean).length, 1, `exactly one of the two workers leads again: ${JSON.stringify([...after])}`)

  // SIGTERM to the primary: each worker drains as a lone server does, then the primary exits 0.
  await server.kill('SIGTERM')
  t.equal(await server.exited, 0, 'the primary exits 0 after its workers stopped')
  t.equal(server.output().match(/"msg":"stopped"/g)?.length, 3, 'two workers and the primary logged "stopped"')
})
