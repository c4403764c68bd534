import pg from 'pg'

/** Database administration on a server: used by the embedded default, the test harness and the bench. */
async function onServer<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

const NAME = /^[a-z_][a-z0-9_]{0,62}$/

function checkedName(name: string): string {
  if (!NAME.test(name)) throw new Error(`Expected a lowercase database name matching ${NAME}, got "${name}"`)
  return name
}

/** `url` with its database replaced by `name`. */
export function withDatabase(url: string, name: string): string {
  const next = new URL(url)
  next.pathname = `/${checkedName(name)}`
  return next.toString()
}

/** `template`: a copy of that database (which nobody may be connected to), e.g. a migrated one. */
export async function createDatabase(serverUrl: string, name: string, options: { ifMissing?: boolean; template?: string } = {}): Promise<void> {
  await onServer(serverUrl, async (c) => {
    if (options.ifMissing && (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount) return
    await c.query(`CREATE DATABASE ${checkedName(name)}${options.template ? ` TEMPLATE ${checkedName(options.template)}` : ''}`)
  })
}

/**
 * pool.end() resolves before its sockets close; forcing the drop at once kills backends that are
 * still saying goodbye and their clients emit errors. Wait (bounded) for them to leave first.
 */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await onServer(serverUrl, async (c) => {
    for (let i = 0; i < 100; i++) {
      const { rows } = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name])
      if (rows[0]!.n === 0) break
      await new Promise((r) => setTimeout(r, 50))
    }
    await c.query(`DROP DATABASE IF EXISTS ${checkedName(name)} WITH (FORCE)`)
  })
}
