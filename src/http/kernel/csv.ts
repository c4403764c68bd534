/**
 * CSV as every export of this server writes it (RFC 4180, CRLF line ends), with spreadsheet
 * formulas neutralised (issue 35, the OWASP "CSV injection" rule): a cell starting with `=`, `+`,
 * `-`, `@`, a tab or a carriage return gets a leading single quote, so a spreadsheet shows the text
 * instead of evaluating it (a deal named `=HYPERLINK(...)` would otherwise run when an admin opens
 * the export). Only CSV does this: JSON and NDJSON carry the value as stored.
 *
 * The one exception is a cell that is a plain decimal number, such as an amount `-5.00`: a
 * spreadsheet reads it as that number and nothing else, and prefixing it would turn every negative
 * figure into text. The exception goes by the cell's text, not by its column, so the same value is
 * treated the same wherever it appears.
 */
const FORMULA_START = /^[=+\-@\t\r]/
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/
// A semicolon too: a spreadsheet in a locale whose list separator is `;` splits an unquoted cell
// there, and the part after it would start a cell of its own (`a;=HYPERLINK(...)`).
const NEEDS_QUOTES = /[",;\r\n]/

export type CsvValue = string | number | null

/** One cell: null is empty; a formula-looking text is prefixed with `'`; then quoted (quotes doubled) when it must be. */
export function csvCell(value: CsvValue): string {
  if (value === null) return ''
  const text = String(value)
  const safe = FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/** One CSV record, CRLF-terminated. */
export const csvLine = (values: readonly CsvValue[]): string => `${values.map(csvCell).join(',')}\r\n`
