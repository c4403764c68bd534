import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { onTeardown } from './cleanup.ts'

type Request = { path: string; status: number; at: number; headers: Record<string, string | string[] | undefined>; body: string; event: { id: string; type: string; position: string; stream: string; revision: number; data: unknown; at: string } }

/** A real HTTP receiver on loopback; each path answers what its behaviour says for its n-th request (200 by default). */
export async function startReceiver(t: Test) {
  const requests: Request[] = []
  const behaviours = new Map<string, (n: number) => number>()
  const counts = new Map<string, number>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const path = req.url ?? '/'
      const n = (counts.get(path) ?? 0) + 1
      counts.set(path, n)
      const status = (behaviours.get(path) ?? (() => 200))(n)
      const body = Buffer.concat(chunks).toString('utf8')
      requests.push({ path, status, at: Date.now(), headers: req.headers, body, event: JSON.parse(body) })
      // A 3xx points elsewhere on this receiver, so a test can see that nobody followed it.
      res.writeHead(status, { 'content-type': 'text/plain', ...(status >= 300 && status < 400 && { location: '/redirected' }) }).end(status < 300 ? 'ok' : 'failing on purpose')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTeardown(t, () => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  const { port } = server.address() as AddressInfo
  return {
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    behave: (path: string, behaviour: (n: number) => number) => behaviours.set(path, behaviour),
    requests: (path: string) => requests.filter((r) => r.path === path),
    delivered: (path: string) => requests.filter((r) => r.path === path && r.status < 300),
  }
}

export async function eventually<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
