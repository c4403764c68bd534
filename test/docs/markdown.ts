/**
 * Just enough Markdown for the docs tests: the README and docs/*.md, their fenced blocks (with the
 * `<!-- not run: reason -->` marker that may precede one), their headings as GitHub anchors, and
 * their relative links.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { REPO } from '../helpers/repo.ts'

export { REPO }

/** The documents whose examples and links are checked, as paths relative to the repository. */
export function docFiles(root = REPO): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`)
  return ['README.md', ...docs]
}

export function readDoc(file: string, root = REPO): string {
  return readFileSync(join(root, file), 'utf8')
}

export type Fence = {
  file: string
  /** 1-based line of the opening fence. */
  line: number
  lang: string
  body: string[]
  /** The reason given by a `<!-- not run: … -->` comment right above the fence. */
  notRun?: string
}

const NOT_RUN = /^<!--\s*not run:\s*(.+?)\s*-->$/
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/

/** Fenced code blocks in order; `lines` of a document that are inside one are reported too (for links). */
export function fencesOf(file: string, text: string): { fences: Fence[]; inFence: boolean[]; strayMarkers: number[] } {
  const lines = text.split('\n')
  const fences: Fence[] = []
  const inFence = lines.map(() => false)
  const strayMarkers: number[] = []
  let open: { fence: string; start: number; lang: string } | undefined
  let pendingMarker: { reason: string; line: number } | undefined
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (open) {
      inFence[i] = true
      const close = FENCE.exec(line)
      if (close && close[1]![0] === open.fence[0] && close[1]!.length >= open.fence.length && close[2] === '') {
        const fence: Fence = { file, line: open.start + 1, lang: open.lang, body: lines.slice(open.start + 1, i) }
        if (pendingMarker) fence.notRun = pendingMarker.reason
        pendingMarker = undefined
        fences.push(fence)
        open = undefined
      }
      continue
    }
    const start = FENCE.exec(line)
    if (start) {
      inFence[i] = true
      open = { fence: start[1]!, start: i, lang: start[2]!.toLowerCase() }
      continue
    }
    const marker = NOT_RUN.exec(line.trim())
    if (marker) {
      if (pendingMarker) strayMarkers.push(pendingMarker.line)
      pendingMarker = { reason: marker[1]!, line: i + 1 }
    } else if (line.trim() !== '' && pendingMarker) {
      // A marker applies only to the fence right below it (blank lines between are allowed).
      strayMarkers.push(pendingMarker.line)
      pendingMarker = undefined
    }
  }
  if (pendingMarker) strayMarkers.push(pendingMarker.line)
  return { fences, inFence, strayMarkers }
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, `-1`, `-2` for repeats. */
export function anchorsOf(text: string): Set<string> {
  const { inFence } = fencesOf('', text)
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  text.split('\n').forEach((line, i) => {
    if (inFence[i]) return
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!heading) return
    const visible = heading[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text only
      .replace(/<[^>]+>/g, '') // inline HTML
    const base = visible
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  })
  return anchors
}

export type Link = { line: number; target: string }

/** Inline links and images `[text](target)` and reference definitions `[x]: target`, outside code. */
export function linksOf(text: string): Link[] {
  const { inFence } = fencesOf('', text)
  const links: Link[] = []
  text.split('\n').forEach((line, i) => {
    if (inFence[i]) return
    const prose = line.replace(/`[^`]*`/g, '') // code spans are not links
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: i + 1, target: match[1]! })
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose)
    if (definition) links.push({ line: i + 1, target: definition[1]! })
  })
  // A link split over two lines ("[text\nmore](target)") still ends on one line with "](", found above.
  return links
}
