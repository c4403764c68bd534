import { existsSync } from 'node:fs'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The repository's root, found from this file upwards: the suite runs compiled under .data/js
 * (test/run.ts), two levels deeper than the sources, so paths relative to a test file's own
 * location would miss the repository's files by those two levels.
 */
function rootAbove(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, 'package.json'))) return at
    if (dirname(at) === at) throw new Error(`no package.json above ${dir}`)
  }
}

export const REPO = rootAbove(dirname(fileURLToPath(import.meta.url)))

/** A module beside the calling one, in its form (`.ts` under tsx, `.js` compiled). */
export function siblingModule(callerUrl: string, name: string): URL {
  return new URL(`./${name}${extname(fileURLToPath(callerUrl))}`, callerUrl)
}
