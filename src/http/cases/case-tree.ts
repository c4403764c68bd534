import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { MAX_TREE_DEPTH } from '../../commands/case/parent.ts'
import { closeWithChildren } from '../../commands/case/close-with-children.ts'
import { changeCase, visibleCase } from '../../commands/case/write-case.ts'
import type { Deps } from '../../deps.ts'
import { ValidationError } from '../../errors.ts'
import { caseRefs, rootOf, subtreeOf } from '../../projections/case/queries.ts'
import type { CaseNode } from '../../projections/case/queries.ts'
import { viewerOf } from '../kernel/auth.ts'
import { callerOf, requestCommands } from '../kernel/commands.ts'
import { ErrorBody, IdParams, authErrors } from '../kernel/schemas/common.ts'
import { CloseWithChildrenAnswer, CloseWithChildrenBody, LinkAnswer, LinkBody, TreeAnswer } from './schemas.ts'
import type { TreeNode } from './schemas.ts'

const TAGS = ['cases']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

/** The nodes as nested children, from the root; a node at the depth limit is `truncated`, its children not shown (the original's tree). */
type Nested = z.infer<typeof TreeNode>
function nested(nodes: readonly CaseNode[], id: string): Nested {
  const node = nodes.find((n) => n.id === id)!
  const atLimit = node.depth >= MAX_TREE_DEPTH
  const children = atLimit ? [] : nodes.filter((n) => n.parent === id && n.depth === node.depth + 1).map((child) => nested(nodes, child.id))
  return { id: node.id, name: node.name, status: node.status, priority: node.priority, is_problem: node.is_problem, is_active: true, assigned_to: node.assigned_to, children, ...(atLimit && { truncated: true }) }
}

/**
 * The problem → incident tree (the original's parent_views.py): link/ sets or clears a case's
 * parent (whoever may change the case; the tree rules of commands/case/parent.ts, refused with 400
 * on `parent_id`); tree/ answers the whole tree the case sits in, from its topmost ancestor;
 * close-with-children/ closes a case and, with `cascade`, the open cases under it.
 */
export function caseTreeRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  return async (app) => {
    app.post('/api/cases/:id/link/', { schema: { tags: TAGS, summary: 'Link a case under a parent case, or unlink it with a null parent_id (admin, creator or assignee)', description: 'No self-link, no cycle, at most 3 levels, nothing merged; 400 on parent_id otherwise.', params: IdParams, body: LinkBody, response: { 200: LinkAnswer, ...errors } } }, async (request, reply) => {
      const caller = callerOf(request)
      const current = await visibleCase(db, caller, request.params.id)
      const parent = request.body.parent_id ?? null
      if (parent === null && current.parent === null) throw new ValidationError({ parent_id: ['Case is not linked to a parent.'] })
      const commands = requestCommands(deps, request, reply)
      await changeCase(deps, caller, current.id, { input: { parent }, replace: false, parentField: 'parent_id' }, commands.session)
      await commands.settle()
      const linked = parent === null ? undefined : (await caseRefs(db, viewerOf(request), [parent])).get(parent)
      return { id: current.id, parent: linked ?? null }
    })

    app.post('/api/cases/:id/close-with-children/', { schema: { tags: TAGS, summary: 'Close a case and, with cascade, every open case under it (whoever may change each of them)', description: 'Each is dated the day of the close; the resolution comment is left on each cascaded case as an internal note. 400 for a merged (Duplicate) case.', params: IdParams, body: CloseWithChildrenBody, response: { 200: CloseWithChildrenAnswer, ...errors } } }, async (request, reply) => {
      const caller = callerOf(request)
      const resolutionComment = request.body.resolution_comment ?? ''
      const commands = requestCommands(deps, request, reply)
      const { cascaded } = await closeWithChildren(deps, caller, request.params.id, { cascade: request.body.cascade, resolutionComment }, commands.session)
      await commands.settle()
      const closed = await visibleCase(db, caller, request.params.id)
      return { id: closed.id, status: closed.status, cascaded_case_ids: cascaded, resolution_comment: resolutionComment }
    })

    app.get('/api/cases/:id/tree/', { schema: { tags: TAGS, summary: 'The case tree a case sits in, from its topmost ancestor (whoever may see the case)', params: IdParams, response: { 200: TreeAnswer, ...errors } } }, async (request) => {
      const caller = callerOf(request)
      const focus = await visibleCase(db, caller, request.params.id)
      const root = await rootOf(db, caller.orgId, focus.id)
      return { root: nested(await subtreeOf(db, caller.orgId, root), root), focus_id: focus.id }
    })
  }
}
