/**
 * `npm run bench:cpu`: where the server's CPU goes per request (issue 20). The compiled bench server
 * runs with `--cpu-prof`; autocannon sends a mix of deal creates and deal lists (or, with
 * BENCH_WORKLOAD=move, board moves; with BENCH_WORKLOAD=create, creates alone) for BENCH_SECONDS
 * at BENCH_CONNECTIONS;
 * the server stops cleanly (so Node writes its profile) and the top self-time frames are printed.
 * Self time is the profile's samples whose top frame is that function, summed over its call sites,
 * counted only while the load ran (V8's sample times and process.hrtime are the same monotonic
 * clock), so start-up and shutdown stay out; shares are of the busy (non-idle) samples.
 * BENCH_PROFILE=projections profiles the projections instead: they run in bench/projector.ts, a
 * process that serves no HTTP (the server follows it), and the figure per answer is that process's
 * CPU per create (issue 36), from /proc as well as from the profile.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import type { Request } from 'autocannon'
import { createDatabase, dropDatabase, withDatabase } from '../src/db/databases.ts'
import { startFlags } from '../test/helpers/process.ts'

const SERVER = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const TOP = Number(process.env.BENCH_TOP ?? 10)
/** mix (default: creates and lists), create (creates alone) or move (board moves of 200 deals). */
const WORKLOAD = process.env.BENCH_WORKLOAD === 'move' || process.env.BENCH_WORKLOAD === 'create' ? process.env.BENCH_WORKLOAD : 'mix'
/** server (default) or projections (bench/projector.ts's process, applying them alone). */
const PROFILED = process.env.BENCH_PROFILE === 'projections' ? 'projections' : 'server'

type ProfileNode = { id: number; hitCount?: number; callFrame: { functionName: string; url: string; lineNumber: number } }
type Profile = { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] }
type Window = { fromUs: number; toUs: number }

const nowUs = () => Number(process.hrtime.bigint() / 1000n)

/** Busy time in the window (µs) and, per function (name, file, line), its share of the busy samples where it was the frame on top. */
function selfTimes(profile: Profile, window: Window): { busyUs: number; frames: { frame: string; selfPct: number }[] } {
  const frameOf = new Map(profile.nodes.map(({ id, callFrame: f }) => {
    const file = f.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(/^.*\/bench\/tmp\/dist\//, '')
    return [id, `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim()]
  }))
  const spent = new Map<string, number>()
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0
    const delta = profile.timeDeltas[i + 1] ?? 0
    const frame = frameOf.get(id)!
    if (at >= window.fromUs && at <= window.toUs && frame !== '(idle)') spent.set(frame, (spent.get(frame) ?? 0) + delta)
  })
  const busyUs = [...spent.values()].reduce((a, b) => a + b, 0)
  const frames = [...spent].sort((a, b) => b[1] - a[1]).map(([frame, us]) => ({ frame, selfPct: (100 * us) / busyUs }))
  return { busyUs, frames }
}

async function main(): Promise<void> {
  const profileDir = mkdtempSync(join(tmpdir(), 'crm-cpu-prof-'))
  const profiling = [`--cpu-prof`, `--cpu-prof-dir=${profileDir}`]
  if (PROFILED === 'server') process.env.BENCH_SERVER_FLAGS = profiling.join(' ')
  // After setting the flags: bench/app.ts reads them when loaded.
  const { compileBenchServer, cpuMs, startBenchApp, startProjector } = await import('./app.ts')
  compileBenchServer()
  const name = `bench_cpu_${Date.now()}`
  await createDatabase(SERVER, name)
  const projector = PROFILED === 'projections' ? await startProjector(withDatabase(SERVER, name), [...startFlags(), ...profiling]) : undefined
  const bench = await startBenchApp(withDatabase(SERVER, name), { applies: !projector }).catch(async (error: unknown) => {
    await projector?.stop()
    throw error
  })
  let window: Window
  let answered: number
  let projectorCpuMs = 0
  const statuses = new Map<number, number>()
  try {
    let n = 0
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1)
    const deals: string[] = []
    if (WORKLOAD === 'move') for (let i = 0; i < 200; i++) deals.push((await bench.call('POST', '/api/opportunities/', { name: `Moved deal ${i}`, amount: '1000.00', currency: 'USD' })).body.id)
    // Each deal in turn, into PROPOSAL then back to QUALIFICATION: every request is a stage change.
    const move = (i: number) => ({ path: `/api/opportunities/${deals[i % deals.length]}/move/`, body: JSON.stringify({ column_id: Math.floor(i / deals.length) % 2 ? 'QUALIFICATION' : 'PROPOSAL' }) })
    const requests: Request[] =
      WORKLOAD === 'move'
        ? [{ method: 'PATCH', onResponse: count, setupRequest: (request) => ({ ...request, ...move(n++) }) }]
        : [
            { method: 'POST', path: '/api/opportunities/', onResponse: count, setupRequest: (request) => ({ ...request, body: JSON.stringify({ name: `Profiled deal ${n++}`, amount: '1000.00', currency: 'USD' }) }) },
            ...(WORKLOAD === 'mix' ? [{ method: 'GET' as const, path: '/api/opportunities/?limit=10', onResponse: count }] : []),
          ]
    const fromUs = nowUs()
    const projectorCpu0 = projector ? cpuMs(projector.pid) : 0
    const result = await autocannon({
      url: bench.url,
      connections: CONNECTIONS,
      duration: SECONDS,
      headers: { ...bench.admin.headers, 'content-type': 'application/json' },
      requests,
    })
    window = { fromUs, toUs: nowUs() }
    if (projector) projectorCpuMs = cpuMs(projector.pid) - projectorCpu0
    answered = result['2xx']
    console.log(`${SECONDS} s, ${CONNECTIONS} connections, ${{ move: 'board moves', create: 'creates', mix: 'create + list' }[WORKLOAD]}: ${answered} answers 2xx (${(answered / result.duration).toFixed(0)}/s), p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  } finally {
    await bench.stop()
    await projector?.stop()
    await dropDatabase(SERVER, name)
  }
  const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'))
  if (!file) throw new Error(`Expected a .cpuprofile in ${profileDir}: did the server exit cleanly?`)
  const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Profile
  const { busyUs, frames } = selfTimes(profile, window)
  console.log(`profile: ${join(profileDir, file)}\n${PROFILED} CPU while loaded: ${(busyUs / 1000).toFixed(0)} ms busy, ${(busyUs / 1000 / answered).toFixed(2)} ms per 2xx answer`)
  if (projector) console.log(`projections' process CPU (/proc, user + system): ${projectorCpuMs} ms, ${((1000 * projectorCpuMs) / answered).toFixed(0)} µs per 2xx answer (per create with BENCH_WORKLOAD=create)`)
  console.log(`top ${TOP} self-time frames (share of busy time):`)
  for (const { frame, selfPct } of frames.slice(0, TOP)) console.log(`${selfPct.toFixed(1).padStart(6)}%  ${frame}`)
}

await main()
