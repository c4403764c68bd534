import { ForbiddenError, NotFoundError } from '../../errors.ts'
import type { Actor } from '../caller.ts'
import type { Decider } from '../decider.ts'
import { streamCategory } from '../streams.ts'

/**
 * A product of the organization's catalogue (the original's Product): what a line item may name.
 * Lines copy the product's name and price, so changing or deleting a product never rewrites an
 * invoice. Any member reads the catalogue; only an admin changes it (the original's product views).
 */
export type ProductFields = {
  name: string
  description: string | null
  sku: string | null
  /** A decimal string with two places. */
  price: string
  currency: string | null
  category: string | null
  is_active: boolean
}

export type ProductEvent =
  | { type: 'ProductCreated'; data: ProductFields & { product_id: string; org_id: string; created_by: string | null; at: string } }
  | { type: 'ProductUpdated'; data: Partial<ProductFields> & { at: string } }
  | { type: 'ProductDeleted'; data: { at: string } }

export type ProductState = { exists: boolean; orgId: string | null; deleted: boolean; fields: ProductFields | null }

type Facts = { orgId: string; actor: Actor; at: string }
export type ProductCommand =
  | ({ type: 'CreateProduct'; productId: string; fields: ProductFields } & Facts)
  | ({ type: 'UpdateProduct'; fields: Partial<ProductFields> } & Facts)
  | ({ type: 'DeleteProduct' } & Facts)

function adminOnly(actor: Actor): void {
  if (!actor.isAdmin) throw new ForbiddenError('Only an administrator can change the product catalog')
}

function decide(command: ProductCommand, state: ProductState): ProductEvent[] {
  if (command.type === 'CreateProduct') {
    adminOnly(command.actor)
    if (state.exists) return []
    return [{ type: 'ProductCreated', data: { product_id: command.productId, org_id: command.orgId, ...command.fields, created_by: command.actor.profileId, at: command.at } }]
  }
  if (!state.exists || state.orgId !== command.orgId) throw new NotFoundError('Product not found')
  adminOnly(command.actor)
  if (command.type === 'DeleteProduct') return state.deleted ? [] : [{ type: 'ProductDeleted', data: { at: command.at } }]
  if (state.deleted) throw new NotFoundError('Product not found')
  const changes = Object.fromEntries(Object.entries(command.fields).filter(([key, value]) => value !== undefined && value !== state.fields![key as keyof ProductFields]))
  return Object.keys(changes).length ? [{ type: 'ProductUpdated', data: { ...changes, at: command.at } }] : []
}

function evolve(state: ProductState, event: ProductEvent): ProductState {
  switch (event.type) {
    case 'ProductCreated': {
      const { product_id: _id, org_id, created_by: _by, at: _at, ...fields } = event.data
      return { exists: true, orgId: org_id, deleted: false, fields }
    }
    case 'ProductUpdated': {
      const { at: _at, ...changes } = event.data
      return { ...state, fields: { ...state.fields!, ...changes } }
    }
    case 'ProductDeleted':
      return { ...state, deleted: true }
  }
}

export const productDecider: Decider<ProductCommand, ProductState, ProductEvent> = { initialState: () => ({ exists: false, orgId: null, deleted: false, fields: null }), evolve, decide }

export const productStreams = streamCategory('product')
export const productStream = productStreams.stream
