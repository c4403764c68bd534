import { z } from 'zod'

/** Path ids: anything that is not a uuid answers 404 (see the error handler), like a missing record. */
export const IdParams = z.object({ id: z.uuid() })

export const Message = z.object({ error: z.literal(false), message: z.string() })

export const ErrorBody = z.object({ error: z.literal(true), errors: z.union([z.string(), z.record(z.string(), z.unknown())]) })

export const iso = (date: Date | null): string | null => date?.toISOString() ?? null

/** The error-flag responses every authenticated route may give, for the OpenAPI document. */
export const authErrors = { 401: ErrorBody, 403: ErrorBody } as const

/** One credential lifecycle event from an organization's audit stream. */
export const AuditEntry = z.object({ type: z.string(), at: z.string(), actor_id: z.string().nullable() })

/** limit/offset pagination (§4.1): default page 10, no maximum. */
export const PageQuery = z.object({ limit: z.coerce.number().int().min(0).default(10), offset: z.coerce.number().int().min(0).default(0) })

/**
 * The offset of the next page, or null when no page follows (§4.1: "null on the last page"): a
 * page that reaches the end, and an empty one (no records, an offset past the end, limit 0). The
 * original answered 0 after an empty accounts page, which would send a client back to the start.
 */
export const nextOffset = (offset: number, shown: number, count: number): number | null => (shown > 0 && offset + shown < count ? offset + shown : null)

/** The list envelope of the newer, bare-data endpoints. */
export const pageOf = <T extends z.ZodType>(item: T) => z.object({ count: z.number().int(), offset: z.number().int(), limit: z.number().int(), results: z.array(item) })
