import { z } from 'zod'
import { ConfigError } from '../config.ts'
import { parsePosition } from '../eventstore/event-store.ts'
import type { Runtime } from '../runtime.ts'
import { exportEvents } from './export.ts'

export type EventsExportOptions = { org?: string; from?: string; type?: string[] }

/** `npm run crm -- events export`: NDJSON on stdout, progress and the resume position as JSON lines on stderr. */
export async function eventsExport(runtime: Runtime, options: EventsExportOptions): Promise<undefined> {
  const orgId = z.uuid().safeParse(options.org)
  if (!orgId.success) throw new ConfigError('events export needs --org <organization id>')
  const after = options.from === undefined ? undefined : parsePosition(options.from)
  if (options.from !== undefined && !after) throw new ConfigError(`--from: expected a position such as 1234-5, got "${options.from}"`)
  const say = (line: object) => process.stderr.write(`${JSON.stringify(line)}\n`)
  const done = await exportEvents(runtime.store, process.stdout, { orgId: orgId.data, after, types: options.type }, (progress) => say({ progress }))
  say(done)
  return undefined
}
