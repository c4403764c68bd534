/**
 * A routing rule's conditions (the original's cases/routing.py): `{field, op, value}` triples, all
 * of which must hold (AND; OR is two rules). Fields: the case's priority, type, account (its id),
 * tags (their names), `custom_fields.<key>`, and what inbound mail adds: the sender's domain and the
 * mailbox. Operators: eq (on a list: one of it), in (value a list), contains, regex.
 */
export const CONDITION_FIELDS = ['priority', 'case_type', 'account', 'tags', 'from_email_domain', 'mailbox_id'] as const
export const CONDITION_OPS = ['eq', 'in', 'contains', 'regex'] as const
export type ConditionOp = (typeof CONDITION_OPS)[number]
export type ConditionValue = string | number | boolean | null | (string | number | boolean | null)[]
export type Condition = { field: string; op: ConditionOp; value: ConditionValue }

/** A field a condition may name: one of CONDITION_FIELDS, or a custom field's `custom_fields.<key>`. */
export const isConditionField = (field: string): boolean => (CONDITION_FIELDS as readonly string[]).includes(field) || /^custom_fields\.\w+$/.test(field)

/** What conditions read of a case. */
export type RoutedCase = {
  priority: string
  case_type: string | null
  account: string | null
  tags: string[]
  custom_fields: Record<string, unknown>
  from_email_domain: string
  mailbox_id: string | null
}

/** A pattern longer than this is refused when written, and a text tested against one is cut to this many characters: bounds a regex's cost. */
export const MAX_PATTERN = 200
const MAX_TESTED = 1000

function valueOf(routed: RoutedCase, field: string): unknown {
  if (field.startsWith('custom_fields.')) return routed.custom_fields[field.slice('custom_fields.'.length)]
  return routed[field as keyof RoutedCase]
}

/** Scalars compare as text (ids, names, numbers a custom field holds), booleans as themselves. */
const coerce = (value: unknown): unknown => (value === null || value === undefined ? null : typeof value === 'boolean' ? value : String(value))

function holds(actual: unknown, { op, value }: Condition): boolean {
  const actuals = Array.isArray(actual) ? actual.map(coerce) : null
  switch (op) {
    case 'eq':
      return actuals ? actuals.includes(coerce(value)) : coerce(actual) === coerce(value)
    case 'in': {
      if (!Array.isArray(value)) return false
      const allowed = value.map(coerce)
      return actuals ? actuals.some((a) => allowed.includes(a)) : allowed.includes(coerce(actual))
    }
    case 'contains':
      if (actual === null || actual === undefined) return false
      return actuals ? actuals.includes(coerce(value)) : String(actual).includes(String(value))
    case 'regex': {
      if (actual === null || actual === undefined || String(value).length > MAX_PATTERN) return false
      let pattern: RegExp
      try {
        pattern = new RegExp(String(value))
      } catch {
        return false
      }
      return (actuals ?? [actual]).some((a) => pattern.test(String(a).slice(0, MAX_TESTED)))
    }
  }
}

/** Whether every condition holds for the case (no conditions: every case). */
export const conditionsHold = (conditions: readonly Condition[], routed: RoutedCase): boolean => conditions.every((condition) => isConditionField(condition.field) && holds(valueOf(routed, condition.field), condition))
