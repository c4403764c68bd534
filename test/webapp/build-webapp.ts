/**
 * The original web app (../shared/clients/bottlecrm-web), copied under .data/ and built there, cached
 * by its lock file's hash: installing from a cold npm cache takes minutes and vite's build up to four
 * on two cores, so a second run with the same lock file reuses the build. `../shared` is never written.
 * Run alone (`node --import tsx test/webapp/build-webapp.ts`) it only prepares the build.
 */
import { createHash } from 'node:crypto'
import { spawn } from 'node:child_process'
import { cp, readFile, rm, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

export const WEBAPP_SOURCE = resolve('../shared/clients/bottlecrm-web')

function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, NODE_ENV: 'production' } })
    child.on('close', (code) => (code === 0 ? done() : fail(new Error(`${command} ${args.join(' ')} exited with ${code} in ${cwd}`))))
  })
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false)
}

/** The folder of a built copy of the web app: `build/index.js` there is its server. */
export async function ensureWebappBuild(log: (line: string) => void = (l) => console.error(l)): Promise<string> {
  const lock = await readFile(resolve(WEBAPP_SOURCE, 'package-lock.json'))
  const key = createHash('sha256').update(lock).digest('hex').slice(0, 16)
  const dir = resolve('.data/webapp', key)
  if (await exists(resolve(dir, 'build/index.js'))) return dir
  const started = Date.now()
  log(`[webapp] preparing a build of ${WEBAPP_SOURCE} in ${dir}`)
  await rm(dir, { recursive: true, force: true })
  await cp(WEBAPP_SOURCE, dir, { recursive: true, filter: (src) => !/[/\\](node_modules|\.svelte-kit|build)$/.test(src) })
  // `npm install` follows the lock file; `npm ci` refuses it (other platforms' optional packages are absent).
  // devDependencies are the build tools, so they are installed whatever NODE_ENV says.
  await run('npm', ['install', '--include=dev', '--no-audit', '--no-fund', '--loglevel=error'], dir)
  await run('npm', ['run', 'build'], dir)
  log(`[webapp] built in ${((Date.now() - started) / 1000).toFixed(0)} s`)
  return dir
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(await ensureWebappBuild())
}
