import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO } from './repo.ts'

export type Finished = { code: number | null; stdout: string; stderr: string }

/** `npm start`'s node flags (the heap limits production runs with), read from package.json's start script. */
export function startFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  return start.match(/ --[\w-]+=\S+/g)?.map((flag) => flag.trim()) ?? []
}

/**
 * Runs a project entry point (`src/main.ts`, `src/cli.ts`) the way npm scripts do: through tsx.
 * With CRM_RUN_BUILT=1, the compiled one instead (`dist/src/main.js` with npm start's flags, as
 * production runs it; `npm run build` first), so the smoke tests can check the build.
 */
export function runEntry(entry: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; finished: Promise<Finished> } {
  const compiled = `dist/${entry.replace(/\.ts$/, '.js')}`
  const node = process.env.CRM_RUN_BUILT === '1' ? [...(entry === 'src/main.ts' ? startFlags() : []), compiled] : ['--import', 'tsx', entry]
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
