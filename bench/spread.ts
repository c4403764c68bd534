/**
 * `npm run bench:spread -- A.json B.json`: two `npm run bench` results side by side, cell by cell
 * (ops/s and p99 of each run, and how far apart the runs are), as a markdown table. The issue asks
 * for every figure run twice: a difference within the spread is not a result.
 */
import { readFileSync } from 'node:fs'
import type { Cell } from './measure.ts'

type Result = { startedAt: string; cells: Cell[]; rebuild?: { eventsPerSec: number } }

const [a, b] = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, 'utf8')) as Result)
if (!a || !b) throw new Error('usage: npm run bench:spread -- first.json second.json')

const key = (c: Cell) => `${c.workload}|${c.clients}`
const second = new Map(b.cells.map((c) => [key(c), c]))
// How far apart two figures are, relative to the larger.
const apart = (x: number, y: number) => `${((100 * Math.abs(x - y)) / Math.max(x, y)).toFixed(0)}%`
const rows = a.cells.flatMap((c) => {
  const d = second.get(key(c))
  return d ? [`| ${c.workload} | ${c.clients} | ${c.opsPerSec.toFixed(0)} | ${d.opsPerSec.toFixed(0)} | ${apart(c.opsPerSec, d.opsPerSec)} | ${c.p99Ms.toFixed(1)} | ${d.p99Ms.toFixed(1)} |`] : []
})
console.log(`Runs ${a.startedAt} and ${b.startedAt}\n`)
console.log('| workload | clients | ops/s run 1 | ops/s run 2 | apart | p99 ms run 1 | p99 ms run 2 |\n|---|---:|---:|---:|---:|---:|---:|')
console.log(rows.join('\n'))
if (a.rebuild && b.rebuild) console.log(`\nRebuild: ${a.rebuild.eventsPerSec.toFixed(0)} and ${b.rebuild.eventsPerSec.toFixed(0)} events/s (${apart(a.rebuild.eventsPerSec, b.rebuild.eventsPerSec)} apart).`)
