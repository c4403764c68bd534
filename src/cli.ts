/**
 * Operator commands, against the same database the server uses (DATABASE_URL or the embedded one,
 * which works while the server runs):
 *   npm run crm -- migrate
 *   npm run crm -- projections status
 *   npm run crm -- projections rebuild [name]
 *   npm run crm -- superuser --email <email>
 *   npm run crm -- names orphans [--org <id>] [--older-than <seconds>] [--release] [--json]
 *   npm run crm -- events export --org <id> [--from <position>] [--type <Type>]…
 *   npm run crm -- privacy rewrap-keys
 */
import { parseArgs } from 'node:util'
import { bootstrap, grantSuperuser, login } from './cli-identity.ts'
import type { CliOptions } from './cli-identity.ts'
import { ConfigError, loadConfig } from './config.ts'
import type { Config } from './config.ts'
import { createLogger } from './logger.ts'
import { namesOrphans } from './names/orphans-command.ts'
import type { NamesOrphansOptions } from './names/orphans-command.ts'
import { eventsExport } from './events/export-command.ts'
import type { EventsExportOptions } from './events/export-command.ts'
import { progressLine } from './projections/kernel/progress-line.ts'
import { rebuildProjection } from './projections/kernel/rebuild.ts'
import { projectionsStatus } from './projections/kernel/status.ts'
import { keyWrapping, rewrapSubjectKeys } from './privacy/master-key.ts'
import { openRuntime } from './runtime.ts'
import type { Runtime } from './runtime.ts'

const USAGE = `Usage: npm run crm -- <command>
  bootstrap --org <name> --email <email>    new organization and admin; prints {org_id, user_id, profile_id, access_token}
  login --email <email> --org <org id>      prints {profile_id, access_token} for an active profile
  superuser --email <email>                 grant the platform-level superuser flag (may delete any deal)
  migrate                         apply pending migrations
  projections status              each projection's checkpoint and lag
  projections rebuild [name]      replay the log into fresh tables and swap them in
  names orphans [--org <id>] [--older-than <seconds>] [--release] [--json]
                                  name claims older than the grace period (default 300 s) whose record is
                                  missing (a process died mid-create); --release frees them
  events export --org <id> [--from <position>] [--type <Type>]…
                                  the organization's events in commit order, upcast to current shapes,
                                  as NDJSON on stdout; progress and the resume position on stderr
  privacy rewrap-keys             wrap every person's data key with CRM_MASTER_KEY (the last step of a
                                  master key rotation, docs/personal-data.md)`

type Command = (runtime: Runtime, args: string[], options: CliOptions & NamesOrphansOptions & EventsExportOptions & { config: Config }) => Promise<unknown>

const commands: Record<string, Command> = {
  bootstrap: (runtime, _args, { config, ...options }) => bootstrap(runtime, config, options),
  login: (runtime, _args, { config, ...options }) => login(runtime, config, options),
  superuser: (runtime, _args, options) => grantSuperuser(runtime, options),
  // openRuntime already migrated; report where the schema stands.
  migrate: async () => ({ migrated: true }),
  'projections status': async ({ db, store, projections }) => projectionsStatus(db, store, projections.projectors),
  'projections rebuild': async ({ db, store, projections }, [name]) => {
    const targets = projections.projectors.filter((p) => name === undefined || p.name === name)
    if (name !== undefined && targets.length === 0) {
      throw new ConfigError(`Unknown projection "${name}"; expected one of: ${projections.projectors.map((p) => p.name).join(', ') || '(none registered)'}`)
    }
    const results = []
    for (const projector of targets) results.push(await rebuildProjection(db, store, projector, undefined, { onProgress: progressLine() }))
    return { rebuilt: results }
  },
  'names orphans': (runtime, _args, options) => namesOrphans(runtime, options),
  'events export': (runtime, _args, options) => eventsExport(runtime, options),
  'privacy rewrap-keys': async ({ db }, _args, { config }) => rewrapSubjectKeys(db, keyWrapping(config.masterKeys)),
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    strict: true,
    options: { org: { type: 'string' }, email: { type: 'string' }, json: { type: 'boolean' }, release: { type: 'boolean' }, 'older-than': { type: 'string' }, from: { type: 'string' }, type: { type: 'string', multiple: true } },
  })
  // Two-word commands: `projections status`, `names orphans`, `events export`, `privacy rewrap-keys`.
  const key = ['projections', 'names', 'events', 'privacy'].includes(positionals[0] ?? '') ? positionals.slice(0, 2).join(' ') : (positionals[0] ?? '')
  const command = commands[key]
  if (!command) {
    console.error(USAGE)
    return 2
  }
  const { config } = loadConfig()
  // Logs go to stderr so stdout stays one JSON document for scripts.
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', 2).child({ component: 'cli' })
  const runtime = await openRuntime(config, logger, 'cli')
  try {
    const result = await command(runtime, positionals.slice(key.split(' ').length), { ...values, config })
    // A command may answer text for people (a table), nothing (it wrote stdout itself), or one JSON document for scripts.
    if (result !== undefined) process.stdout.write(`${typeof result === 'string' ? result : JSON.stringify(result, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}\n`)
    return 0
  } finally {
    await runtime.close()
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof ConfigError ? error.message : error)
    process.exit(1)
  },
)
