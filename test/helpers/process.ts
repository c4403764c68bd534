import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'

export type Finished = { code: number | null; stdout: string; stderr: string }

/** Runs a project entry point (`src/main.ts`, `src/cli.ts`) the way npm scripts do. */
export function runEntry(entry: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; finished: Promise<Finished> } {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
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
