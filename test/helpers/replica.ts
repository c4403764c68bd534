/**
 * A PostgreSQL primary and its streaming replica of our own, for the read-replica tests: initdb in a
 * temporary directory, the primary on a free port, `pg_basebackup -R` for the replica (which then
 * streams from it) on another. Debian's PostgreSQL tools (/usr/lib/postgresql/<version>/bin) are
 * needed: the embedded package ships no pg_basebackup. As root (CI), the servers run as the
 * `postgres` OS user, PostgreSQL refusing root. Both are stopped and their directory removed at
 * teardown.
 */
import { execFile } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { freePort } from '../../src/db/embedded-postgres.ts'
import { onTeardown } from './cleanup.ts'

const run = promisify(execFile)
const TOOLS = ['initdb', 'pg_ctl', 'pg_basebackup']

export type ReplicatedCluster = { primaryUrl: string; replicaUrl: string }

/** Where Debian's PostgreSQL tools are, newest version first; undefined when none has them all. */
function debianBinDir(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))
  return versions.map((v) => join(root, v, 'bin')).find((dir) => TOOLS.every((tool) => existsSync(join(dir, tool))))
}

/** Why a primary and replica cannot be made here, or undefined when they can. */
export async function replicaUnavailable(): Promise<string | undefined> {
  if (!debianBinDir()) return `no PostgreSQL tools with ${TOOLS.join(', ')} under /usr/lib/postgresql/*/bin (Debian's postgresql package)`
  if (process.getuid?.() === 0 && !(await postgresUser())) return 'running as root and there is no `postgres` OS user to run the servers as'
  return undefined
}

async function postgresUser(): Promise<{ uid: number; gid: number } | undefined> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])])
    return { uid: Number(uid.stdout), gid: Number(gid.stdout) }
  } catch {
    return undefined
  }
}

export async function startPrimaryWithReplica(t: Test): Promise<ReplicatedCluster> {
  const bin = debianBinDir()!
  const as = process.getuid?.() === 0 ? await postgresUser() : undefined
  const dir = mkdtempSync(join(tmpdir(), 'crm-replica-'))
  chmodSync(dir, 0o755)
  if (as) chownSync(dir, as.uid, as.gid)
  onTeardown(t, () => rmSync(dir, { recursive: true, force: true }))
  const tool = (name: string, args: string[]) => run(join(bin, name), args, { cwd: dir, ...(as ?? {}), env: { ...process.env, PGUSER: 'postgres' } })
  const [primaryPort, replicaPort] = [await freePort(), await freePort()]
  const options = (port: number) => `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c max_connections=60`
  const primaryDir = join(dir, 'primary')
  const replicaDir = join(dir, 'replica')

  await tool('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'])
  await tool('pg_ctl', ['-D', primaryDir, '-o', options(primaryPort), '-l', join(dir, 'primary.log'), '-w', 'start'])
  onTeardown(t, () => tool('pg_ctl', ['-D', primaryDir, '-m', 'immediate', 'stop']).catch(() => {}))
  // -R writes primary_conninfo and standby.signal: the copy starts as a hot standby streaming from the primary.
  await tool('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'])
  await tool('pg_ctl', ['-D', replicaDir, '-o', options(replicaPort), '-l', join(dir, 'replica.log'), '-w', 'start'])
  onTeardown(t, () => tool('pg_ctl', ['-D', replicaDir, '-m', 'immediate', 'stop']).catch(() => {}))
  const url = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`
  return { primaryUrl: url(primaryPort), replicaUrl: url(replicaPort) }
}
