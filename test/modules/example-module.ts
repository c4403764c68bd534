import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { Decider } from '../../src/commands/decider.ts'
import { streamCategory } from '../../src/commands/streams.ts'
import type { Deps } from '../../src/deps.ts'
import { NotFoundError } from '../../src/errors.ts'
import { Id, at, eventsOf } from '../../src/events/event-schemas.ts'
import { identityOf } from '../../src/http/kernel/auth.ts'
import { requestCommands } from '../../src/http/kernel/commands.ts'
import { ErrorBody, IdParams, authErrors } from '../../src/http/kernel/schemas/common.ts'
import { domainEventOf } from '../../src/events/versions.ts'
import type { ModuleManifest } from '../../src/modules/manifest.ts'
import type { Projector } from '../../src/projections/kernel/projector.ts'
import { str } from '../../src/projections/search/search-documents.ts'

/**
 * A whole module in one file, as small as one can be: memos (one event, one decider, one read
 * model, two routes, one id kind, a kind of search document). test/modules/new-module.test.ts adds it to the module list, the
 * one line a new module's diff adds to a shared file, and finds it wired everywhere.
 */
type MemoEvent = { type: 'MemoWritten'; data: { memo_id: string; org_id: string; text: string; at: string } }
type WriteMemo = { type: 'WriteMemo'; memoId: string; orgId: string; text: string; at: string }

const memoDecider: Decider<WriteMemo, { written: boolean }, MemoEvent> = {
  initialState: () => ({ written: false }),
  evolve: () => ({ written: true }),
  decide: (command, state) => (state.written ? [] : [{ type: 'MemoWritten', data: { memo_id: command.memoId, org_id: command.orgId, text: command.text, at: command.at } }]),
}

// Its table joins the Database type from here, as a module's projections/<module>/tables.ts does.
declare module '../../src/db/database.ts' {
  interface Database {
    example_memos: { id: string; org_id: string; text: string }
  }
}

const memosProjector: Projector = {
  name: 'example_memos',
  version: 1,
  eventTypes: ['MemoWritten'],
  tables: ['example_memos'],
  async createTables(db) {
    await db.schema.createTable('example_memos').addColumn('id', 'uuid', (c) => c.primaryKey()).addColumn('org_id', 'uuid', (c) => c.notNull()).addColumn('text', 'text', (c) => c.notNull()).execute()
  },
  async apply(trx, recorded) {
    const { data } = domainEventOf<MemoEvent>(recorded)
    await trx.insertInto('example_memos').values({ id: data.memo_id, org_id: data.org_id, text: data.text }).onConflict((c) => c.doNothing()).execute()
  },
}

const Memo = z.object({ id: z.uuid(), text: z.string() })

function memoRoutes(deps: Deps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/api/example-memos/', { schema: { tags: ['memos'], summary: 'Write a memo', body: z.object({ text: z.string().min(1) }), response: { 200: Memo, 400: ErrorBody, ...authErrors } } }, async (request, reply) => {
      const { run, settle } = requestCommands(deps, request, reply)
      const memoId = randomUUID()
      await run(memoDecider, `memo-${memoId}`, { type: 'WriteMemo', memoId, orgId: identityOf(request).orgId, text: request.body.text, at: deps.clock().toISOString() })
      await settle()
      return { id: memoId, text: request.body.text }
    })
    app.get('/api/example-memos/:id/', { schema: { tags: ['memos'], summary: 'A memo', params: IdParams, response: { 200: Memo, 404: ErrorBody, ...authErrors } } }, async (request) => {
      const row = await deps.db.selectFrom('example_memos' as never).selectAll().where('id' as never, '=', request.params.id as never).where('org_id' as never, '=', identityOf(request).orgId as never).executeTakeFirst()
      if (!row) throw new NotFoundError()
      return row as z.infer<typeof Memo>
    })
  }
}

export const exampleModule: ModuleManifest = {
  name: 'example-memo',
  events: eventsOf<MemoEvent>()({
    MemoWritten: { stream: 'memo', description: 'A memo was written.', data: z.strictObject({ memo_id: Id, org_id: Id, text: z.string(), ...at }) },
  }),
  routes: async (deps) => [memoRoutes(deps)],
  projectors: [memosProjector],
  idKinds: [[/^\/api\/example-memos\/\{id\}/, 'exampleMemo']],
  search: {
    kind: 'memo',
    order: 7,
    // A kind that joins search after it was built starts at 1: the search projector is rebuilt with it.
    version: 1,
    streams: streamCategory('memo'),
    events: { created: 'MemoWritten' },
    changes: 'flat',
    keys: ['text'],
    // Memos are the whole organization's, as its knowledge base is (a real module adds its own line to the visibility policy).
    visibility: 'Solution',
    document: (f) => ({ title: str(f.text), subtitle: '', names: str(f.text), terms: '' }),
  },
}
