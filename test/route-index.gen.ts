/**
 * Re-generates src/http/kernel/route-index.json (the single source of truth of the route index) from
 * the spec: the §4.8 table `| Path | Methods |` plus the pipeline and stage routes of the §4.5
 * table `| Method | Path | ... |`. Run it after the spec changes:
 *
 *   node --import tsx test/route-index.gen.ts [../shared/spec/crm-api.md]
 *
 * test/http/route-index.test.ts also re-parses the spec (when it is present) and fails if the
 * committed JSON has drifted from it.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { REPO } from './helpers/repo.ts'

export type RouteIndexEntry = { path: string; methods: string[] }

export const SPEC_PATH = resolve(REPO, '../shared/spec/crm-api.md')
export const INDEX_PATH = resolve(REPO, 'src/http/kernel/route-index.json')

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])

/** The lines of the section whose heading starts with `### <number> ` (up to the next heading). */
function section(markdown: string, number: string): string[] {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => line.startsWith(`### ${number} `))
  if (start < 0) throw new Error(`No section ${number} in the spec`)
  const end = lines.findIndex((line, i) => i > start && /^#{1,3} /.test(line))
  return lines.slice(start + 1, end < 0 ? undefined : end)
}

/** Rows of the first table of a section whose header cells are `columns` (case-insensitively), as cell arrays. */
function tableRows(lines: string[], columns: string[]): string[][] {
  const cells = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim().replace(/^`|`$/g, ''))
  const header = lines.findIndex((line) => line.trim().startsWith('|') && cells(line).slice(0, columns.length).join('|').toLowerCase() === columns.join('|').toLowerCase())
  if (header < 0) throw new Error(`No table with columns ${columns.join(', ')}`)
  const rows: string[][] = []
  for (const line of lines.slice(header + 2)) {
    if (!line.trim().startsWith('|')) break
    rows.push(cells(line))
  }
  return rows
}

function methodsOf(text: string): string[] {
  const methods = text.split(',').map((m) => m.trim().toUpperCase())
  for (const method of methods) if (!METHODS.has(method)) throw new Error(`Unexpected method ${method}`)
  return methods
}

/** §4.8 in table order, then the §4.5 routes (methods merged into an existing path, new paths appended). */
export function parseRouteIndex(markdown: string): RouteIndexEntry[] {
  const byPath = new Map<string, Set<string>>()
  const add = (path: string, methods: string[]) => {
    if (!/^\/api\/\S*$/.test(path)) throw new Error(`Unexpected path ${path}`)
    const known = byPath.get(path) ?? new Set<string>()
    for (const method of methods) known.add(method)
    byPath.set(path, known)
  }
  for (const [path, methods] of tableRows(section(markdown, '4.8'), ['Path', 'Methods'])) add(path!, methodsOf(methods!))
  for (const [method, path] of tableRows(section(markdown, '4.5'), ['Method', 'Path'])) add(path!, methodsOf(method!))
  return [...byPath].map(([path, methods]) => ({ path, methods: [...methods].sort() }))
}

export const renderRouteIndex = (entries: RouteIndexEntry[]): string => `[\n${entries.map((entry) => `  ${JSON.stringify(entry)}`).join(',\n')}\n]\n`

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const entries = parseRouteIndex(readFileSync(process.argv[2] ?? SPEC_PATH, 'utf8'))
  writeFileSync(INDEX_PATH, renderRouteIndex(entries))
  console.log(`${entries.length} paths, ${entries.reduce((n, e) => n + e.methods.length, 0)} path+method pairs written to ${INDEX_PATH}`)
}
