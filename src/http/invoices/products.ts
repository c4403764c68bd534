import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { productDecider, productStream } from '../../commands/invoice/product.ts'
import type { ProductFields } from '../../commands/invoice/product.ts'
import type { Deps } from '../../deps.ts'
import { NotFoundError } from '../../errors.ts'
import { isCurrency } from '../../identity/organizations.ts'
import { productUse } from '../../projections/invoice/queries.ts'
import { listProducts, productOf } from '../../projections/invoice/products.ts'
import type { ProductRow } from '../../projections/invoice/products.ts'
import { blankable } from '../accounts/schemas.ts'
import { actorOf, callerOf, requestCommands } from '../kernel/commands.ts'
import { pageLinks } from '../kernel/page-links.ts'
import { ErrorBody, IdParams, Message, PageQuery, authErrors } from '../kernel/schemas/common.ts'
import { formBoolean } from '../kernel/schemas/form-values.ts'
import { Amount } from '../opportunities/schemas.ts'

const TAGS = ['invoices']
const errors = { 400: ErrorBody, ...authErrors, 404: ErrorBody } as const

const ProductBody = z.object({
  name: z.string().trim().min(1, 'This field may not be blank.').max(255),
  description: blankable(z.string().trim().max(10_000)),
  sku: blankable(z.string().trim().max(100)),
  price: Amount.optional().describe('A non-negative decimal (string or number), at most 2 places; default 0'),
  currency: blankable(z.string().trim().toUpperCase().refine(isCurrency, 'Expected an ISO 4217 currency code, such as "USD".')),
  category: blankable(z.string().trim().max(100)),
  is_active: formBoolean(z.boolean()).optional().describe('Default true; an inactive product is kept for the invoices that name it and offered for no new ones'),
})

const Product = z.object({
  id: z.uuid(), name: z.string(), description: z.string().nullable(), sku: z.string().nullable(), price: z.string(), currency: z.string().nullable(), category: z.string().nullable(), is_active: z.boolean(),
  used_on: z.number().int().describe('How many invoices name it on a line'), created_at: z.string(), updated_at: z.string(),
})
const ProductList = z.object({ count: z.number().int(), next: z.string().nullable(), previous: z.string().nullable(), results: z.array(Product) })
const ProductQuery = PageQuery.extend({ search: z.string().optional().describe('Case-insensitive contains on the name or SKU'), category: z.string().optional(), is_active: z.enum(['true', 'false']).optional() })

const productBody = (row: ProductRow, usedOn: number): z.infer<typeof Product> => ({
  id: row.id, name: row.name, description: row.description, sku: row.sku, price: row.price, currency: row.currency, category: row.category, is_active: row.is_active,
  used_on: usedOn, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
})

/**
 * The product catalogue (/api/invoices/products/, the original's ProductListView and
 * ProductDetailView): any member reads it, an admin changes it. The list and detail answer the bare
 * product, as the original does; writes answer it under `product` too.
 */
export function productRoutes(deps: Deps): FastifyPluginAsyncZod {
  const { db } = deps
  const found = async (orgId: string, id: string) => {
    const row = await productOf(db, orgId, id)
    if (!row) throw new NotFoundError('Product not found')
    return row
  }
  const answer = async (orgId: string, id: string) => productBody(await found(orgId, id), (await productUse(db, orgId, [id])).get(id) ?? 0)
  const Written = z.object({ error: z.literal(false), message: z.string(), product: Product })

  return async (app) => {
    app.get('/api/invoices/products/', { schema: { tags: TAGS, summary: 'The product catalogue, by name (any member)', querystring: ProductQuery, response: { 200: ProductList, ...errors } } }, async (request) => {
      const { orgId } = callerOf(request)
      const { limit, offset, search, category, is_active } = request.query
      const { count, rows } = await listProducts(db, orgId, { search, category, isActive: is_active === undefined ? undefined : is_active === 'true' }, { limit, offset })
      const used = await productUse(db, orgId, rows.map((row) => row.id))
      return { count, ...pageLinks(request, { count, limit, offset }), results: rows.map((row) => productBody(row, used.get(row.id) ?? 0)) }
    })

    app.post('/api/invoices/products/', { schema: { tags: TAGS, summary: 'Add a product to the catalogue (admins)', body: ProductBody, response: { 201: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { orgId } = callerOf(request)
      const id = randomUUID()
      const { name, description, sku, price, currency, category, is_active } = request.body
      const fields: ProductFields = { name, description: description ?? null, sku: sku ?? null, price: price ?? '0.00', currency: currency ?? null, category: category ?? null, is_active: is_active ?? true }
      await commands.run(productDecider, productStream(id), { type: 'CreateProduct', productId: id, orgId, actor: actorOf(request), fields, at: deps.clock().toISOString() }, { expectNew: true })
      await commands.settle()
      return reply.code(201).send({ error: false as const, message: 'Product created successfully', product: await answer(orgId, id) })
    })

    app.get('/api/invoices/products/:id/', { schema: { tags: TAGS, summary: 'One product (any member)', params: IdParams, response: { 200: Product, ...errors } } }, async (request) => answer(callerOf(request).orgId, request.params.id))

    app.put('/api/invoices/products/:id/', { schema: { tags: TAGS, summary: 'Change a product: the fields sent (admins)', description: 'Invoices keep the name and price their lines copied.', params: IdParams, body: ProductBody.partial(), response: { 200: Written, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      const { orgId } = callerOf(request)
      await found(orgId, request.params.id)
      await commands.run(productDecider, productStream(request.params.id), { type: 'UpdateProduct', orgId, actor: actorOf(request), fields: request.body, at: deps.clock().toISOString() })
      await commands.settle()
      return { error: false as const, message: 'Product updated successfully', product: await answer(orgId, request.params.id) }
    })

    app.delete('/api/invoices/products/:id/', { schema: { tags: TAGS, summary: 'Delete a product (admins); invoices that name it keep their lines', params: IdParams, response: { 200: Message, ...errors } } }, async (request, reply) => {
      const commands = requestCommands(deps, request, reply)
      await commands.run(productDecider, productStream(request.params.id), { type: 'DeleteProduct', orgId: callerOf(request).orgId, actor: actorOf(request), at: deps.clock().toISOString() })
      await commands.settle()
      return { error: false as const, message: 'Product deleted successfully' }
    })
  }
}
