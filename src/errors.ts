import { formatPosition } from './eventstore/event-store.ts'
import type { Position } from './eventstore/event-store.ts'

/**
 * The few errors the domain raises. Each carries its HTTP status and the `errors` payload of the
 * spec's error-flag shape; the HTTP error handler renders them once, at the edge.
 */
export type ErrorDetail = string | Record<string, unknown>

export class DomainError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errors: ErrorDetail,
  ) {
    super(typeof errors === 'string' ? errors : JSON.stringify(errors))
    this.name = new.target.name
  }
}

/** Field name to messages, e.g. `{ closed_on: ['Required when the stage is won or lost'] }`. */
export class ValidationError extends DomainError {
  constructor(errors: Record<string, string[]> | string) {
    super(400, errors)
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message = 'Authentication credentials were not provided or are invalid') {
    super(401, message)
  }
}

export class ForbiddenError extends DomainError {
  constructor(message = 'You do not have permission to perform this action') {
    super(403, message)
  }
}

export class NotFoundError extends DomainError {
  constructor(message = 'Not found') {
    super(404, message)
  }
}

/** The record was there and is gone for good (an erased person, issue 31). */
export class GoneError extends DomainError {
  constructor(message: string) {
    super(410, message)
  }
}

export class ConflictError extends DomainError {
  constructor(message: string) {
    super(409, message)
  }
}

/** The client's If-Match names a revision the record has moved past (optimistic concurrency for clients). */
export class PreconditionFailedError extends DomainError {
  constructor(message: string) {
    super(412, message)
  }
}

/**
 * The read models did not apply a position within the wait (not a domain error: the change, if
 * any, was saved). Raised by the projection runner and by read-your-writes waits; the HTTP error
 * handler answers 503 with Retry-After.
 */
export class ProjectionLagError extends Error {
  /** `behind`: the read models that had not, with where each was known to be ("accounts at 12-3", "tags not started"). */
  constructor(readonly position: Position, timeoutMs: number, readonly behind: readonly string[] = []) {
    super(`Read models did not reach position ${formatPosition(position)} within ${timeoutMs} ms${behind.length ? ` (behind: ${behind.join(', ')})` : ''}`)
    this.name = 'ProjectionLagError'
  }
}

/** The row, or a 404: for lookups scoped to the caller's organization, where another org's id reads as missing. */
export async function orNotFound<T>(row: Promise<T | undefined>): Promise<T> {
  const found = await row
  if (found === undefined) throw new NotFoundError()
  return found
}

/** Messages grouped by field (dotted path; an empty one is `non_field_errors`), in the spec's error shape. */
export function errorsByField(entries: Iterable<readonly [field: string, message: string]>): Record<string, string[]> {
  // No prototype: a body key such as `constructor` is just a field name here.
  const errors: Record<string, string[]> = Object.create(null)
  for (const [field, message] of entries) (errors[field || 'non_field_errors'] ??= []).push(message)
  return { ...errors }
}
