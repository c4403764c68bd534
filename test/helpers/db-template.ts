import { createHash } from 'node:crypto'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import pg from 'pg'
import { createDb, createPool } from '../../src/db/database.ts'
import { withDatabase } from '../../src/db/databases.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts'
import { allProjectors } from '../../src/modules/modules.ts'
import { rebuildProjection } from '../../src/projections/kernel/rebuild.ts'

/**
 * Template databases for the suite: a test file's fresh database is a copy of one (CREATE DATABASE
 * … TEMPLATE, a file copy), not a migration run plus fourteen read models built from an empty log,
 * which every one of a hundred test files otherwise repeats. `migrated` holds the migrations; `app`
 * also every read model's tables and checkpoint at its current version, as a first start leaves
 * them, so the app's runner finds nothing to build. A template is named by a hash of the code that
 * shapes it, built once per server by the first test file that asks (under an advisory lock), and
 * replaces the templates of older code.
 */
export type TemplateKind = 'migrated' | 'app'

const SHAPING_CODE = ['migrations', 'src/db', 'src/projections', 'src/modules']
const PREFIX = 'crm_tpl_'

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort()
}

let codeHash: Promise<string> | undefined
function hashOfShapingCode(): Promise<string> {
  codeHash ??= (async () => {
    const hash = createHash('sha256')
    for (const file of (await Promise.all(SHAPING_CODE.map(filesUnder))).flat()) hash.update(file).update(await readFile(file))
    return hash.digest('hex').slice(0, 12)
  })()
  return codeHash
}

async function fill(url: string, kind: TemplateKind): Promise<void> {
  const pool = createPool(url, 4)
  const db = createDb(pool)
  try {
    await migrateToLatest(db)
    if (kind === 'app') {
      const store = createPostgresEventStore({ pool })
      for (const projector of allProjectors) await rebuildProjection(db, store, projector)
      await store.close()
    }
  } finally {
    await db.destroy()
  }
}

const KEEP = 4

/** A pool's sockets close after pool.end() resolves; renaming (and copying) needs them gone. */
async function untilUnused(admin: pg.Client, database: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [database])
    if (rows[0]!.n === 0) return
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** The name of the template of this kind for the current code, built first if the server lacks it. */
export async function templateFor(serverUrl: string, kind: TemplateKind): Promise<string> {
  const name = `${PREFIX}${kind}_${await hashOfShapingCode()}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [PREFIX])
    if ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount) return name
    const building = `${name}_building_${process.pid}`
    await admin.query(`CREATE DATABASE ${building}`)
    await fill(withDatabase(serverUrl, building), kind)
    await untilUnused(admin, building)
    await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`)
    // Older code's templates, but the newest few: another checkout of older code may be copying one.
    const { rows: stale } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE '${PREFIX}${kind}_%' ORDER BY oid DESC OFFSET ${KEEP}`)
    for (const { datname } of stale) await admin.query(`DROP DATABASE IF EXISTS ${datname}`).catch(() => {})
    return name
  } finally {
    await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [PREFIX]).catch(() => {})
    await admin.end()
  }
}
