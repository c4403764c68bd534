import { sql } from 'kysely'
import { productStreams } from '../../commands/invoice/product.ts'
import type { ProductEvent } from '../../commands/invoice/product.ts'
import type { Db } from '../../db/database.ts'
import { containsPattern } from '../../db/like.ts'
import { domainEventOf } from '../../events/versions.ts'
import type { Projector } from '../kernel/projector.ts'
import type { ProductRow } from './tables.ts'

export type { ProductRow } from './tables.ts'

/** The product catalogue: one row per product, deleted ones kept and flagged (invoice lines may still name them). */
async function createTables(db: Db): Promise<void> {
  await sql`CREATE TABLE products (
    id uuid PRIMARY KEY, org_id uuid NOT NULL, name text NOT NULL, description text, sku text, price numeric NOT NULL,
    currency text, category text, is_active boolean NOT NULL, is_deleted boolean NOT NULL, created_by uuid,
    created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`.execute(db)
}

async function createIndexes(db: Db): Promise<void> {
  await sql`CREATE INDEX products_org_name ON products (org_id, name) WHERE NOT is_deleted`.execute(db)
}

async function apply(db: Db, id: string, event: ProductEvent): Promise<void> {
  const at = new Date(event.data.at)
  switch (event.type) {
    case 'ProductCreated': {
      const { product_id: _id, at: _at, ...fields } = event.data
      await db.insertInto('products').values({ ...fields, id, is_deleted: false, created_at: at, updated_at: at }).onConflict((oc) => oc.column('id').doNothing()).execute()
      return
    }
    case 'ProductUpdated': {
      const { at: _at, ...changes } = event.data
      await db.updateTable('products').set({ ...changes, updated_at: at }).where('id', '=', id).execute()
      return
    }
    case 'ProductDeleted':
      await db.updateTable('products').set({ is_deleted: true, updated_at: at }).where('id', '=', id).execute()
  }
}

export const productsProjector: Projector = {
  name: 'products',
  version: 1,
  eventTypes: ['ProductCreated', 'ProductUpdated', 'ProductDeleted'],
  tables: ['products'],
  createTables,
  createIndexes,
  apply: (trx, recorded) => apply(trx, productStreams.idOf(recorded.streamName), domainEventOf<ProductEvent>(recorded)),
}

/** A live product of the organization, or undefined. */
export const productOf = (db: Db, orgId: string, id: string): Promise<ProductRow | undefined> =>
  db.selectFrom('products').selectAll().where('org_id', '=', orgId).where('id', '=', id).where('is_deleted', '=', false).executeTakeFirst()

/** Live products of the organization among `ids`. */
export async function liveProducts(db: Db, orgId: string, ids: readonly string[]): Promise<ProductRow[]> {
  if (!ids.length) return []
  return db.selectFrom('products').selectAll().where('org_id', '=', orgId).where('id', 'in', ids).where('is_deleted', '=', false).execute()
}

export type ProductFilter = { search?: string; category?: string; isActive?: boolean }

/** A page of the catalogue by name, and how many match. */
export async function listProducts(db: Db, orgId: string, filter: ProductFilter, page: { limit: number; offset: number }): Promise<{ count: number; rows: ProductRow[] }> {
  let query = db.selectFrom('products').where('org_id', '=', orgId).where('is_deleted', '=', false)
  if (filter.search) query = query.where((eb) => eb.or([eb('name', 'ilike', containsPattern(filter.search!)), eb('sku', 'ilike', containsPattern(filter.search!))]))
  if (filter.category) query = query.where('category', '=', filter.category)
  if (filter.isActive !== undefined) query = query.where('is_active', '=', filter.isActive)
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('name').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { count: Number(count.n), rows }
}

/** The names of products (deleted ones too: an invoice's lines may name them), by id. */
export async function productNames(db: Db, orgId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map()
  const rows = await db.selectFrom('products').select(['id', 'name']).where('org_id', '=', orgId).where('id', 'in', ids).execute()
  return new Map(rows.map((row) => [row.id, row.name]))
}
