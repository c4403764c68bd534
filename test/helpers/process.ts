import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { REPO } from './repo.ts'

export type Finished = { code: number | null; stdout: string; stderr: string }

/** `npm start`'s node flags (the heap limits production runs with), read from package.json's start script. */
export function startFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  return start.match(/ --[\w-]+=\S+/g)?.map((flag) => flag.trim()) ?? []
}

/**
 * Where this suite's own compiled sources are when it runs compiled (test/run.ts emits src/ beside
 * test/ under .data/js, the layout of dist/), else undefined (a test file run through tsx).
 */
const suiteBuild = (): string | undefined => {
  const here = fileURLToPath(import.meta.url)
  return extname(here) === '.js' ? join(dirname(here), '..', '..') : undefined
}

/**
 * Runs a project entry point (`src/main.ts`, `src/cli.ts`) as JavaScript: the suite's compiled copy
 * (.data/js) when the suite runs compiled, since a child started through tsx spent about 3 s of CPU
 * in its loader, and the smoke, CLI and reliability tests start some forty of them; through tsx
 * otherwise. With CRM_RUN_BUILT=1, the production build instead (`dist/src/main.js` with npm
 * start's flags; `npm run build` first), so the smoke tests can check the build.
 */
export function runEntry(entry: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; finished: Promise<Finished> } {
  const asJs = entry.replace(/\.ts$/, '.js')
  const build = suiteBuild()
  const node = process.env.CRM_RUN_BUILT === '1' ? [...(entry === 'src/main.ts' ? startFlags() : []), `dist/${asJs}`] : build ? [join(build, asJs)] : ['--import', 'tsx', entry]
  const child = spawn(process.execPath, [...node, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk) => (stdout += chunk))
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const finished = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
  return { child, finished }
}

/** The environment of the test run minus the variables a test wants to control. */
export function envWithout(...names: string[]): NodeJS.ProcessEnv {
  const env = { ...process.env }
  for (const name of names) delete env[name]
  return env
}
