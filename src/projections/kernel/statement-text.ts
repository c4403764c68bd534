import pg from 'pg'

/** pg's own conversion of a parameter to the text it sends (typed by @types/pg as absent, but exported). */
const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils

/**
 * SQL text for the simple-query protocol, which carries several statements in one round trip but
 * takes no parameters (kernel/page-writes.ts). Both functions scan the text kysely compiled, or a
 * projector wrote, outside its string literals, quoted identifiers and comments; text they cannot
 * scan with certainty (dollar quotes, backslashes) is refused, and the caller sends it as it is.
 */

/**
 * The statement with each `$n` replaced by the literal of what pg would send for it: the same text
 * (`prepareValue`), as an untyped literal, which PostgreSQL types from its context as it types an
 * untyped parameter. Undefined when a value has no such text (a Buffer goes binary) or the text is
 * not one this scans.
 */
export function inlineParameters(text: string, parameters: readonly unknown[]): string | undefined {
  if (/[\\]|\$[^0-9]|\$$/.test(text)) return undefined
  const literals: string[] = []
  for (const value of parameters) {
    const prepared = prepareValue(value)
    if (prepared === null) literals.push('NULL')
    else if (typeof prepared === 'string') literals.push(pg.escapeLiteral(prepared))
    else return undefined
  }
  let out = ''
  let failed = false
  scan(text, (code, start, end) => {
    out += code.slice(start, end).replace(/\$(\d+)/g, (_, n: string) => {
      const literal = literals[Number(n) - 1]
      if (literal === undefined) failed = true
      return literal ?? ''
    })
  }, (quoted) => {
    out += quoted
  })
  return failed ? undefined : out
}

const MAIN_STATEMENTS = new Set(['select', 'insert', 'update', 'delete', 'merge', 'values', 'table'])
const WRITES = new Set(['insert', 'update', 'delete'])

/**
 * Whether the statement answers no rows: its main statement (after any WITH list) is an INSERT,
 * UPDATE or DELETE without RETURNING. What it changed can only be seen by reading it again.
 */
export function returnsNoRows(text: string): boolean {
  if (/[\\]|\$[^0-9]|\$$/.test(text)) return false
  const words: string[] = []
  let depth = 0
  scan(text, (code, start, end) => {
    for (const token of code.slice(start, end).matchAll(/[()]|[A-Za-z_][A-Za-z0-9_]*/g)) {
      if (token[0] === '(') depth++
      else if (token[0] === ')') depth--
      else if (depth === 0) words.push(token[0].toLowerCase())
    }
  }, () => {})
  const main = words.find((word) => MAIN_STATEMENTS.has(word))
  return main !== undefined && WRITES.has(main) && !words.includes('returning') && (words[0] === main || words[0] === 'with')
}

/**
 * Calls `code` for each stretch of `text` outside quotes and comments, `quoted` for each quoted
 * literal or identifier (with its quotes) and comment, in order.
 */
function scan(text: string, code: (text: string, start: number, end: number) => void, quoted: (part: string) => void): void {
  let start = 0
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    const next = text[i + 1]
    let end: number
    if (c === "'" || c === '"') end = closingQuote(text, i, c)
    else if (c === '-' && next === '-') end = lineEnd(text, i)
    else if (c === '/' && next === '*') end = text.indexOf('*/', i + 2) < 0 ? text.length : text.indexOf('*/', i + 2) + 2
    else {
      i++
      continue
    }
    code(text, start, i)
    quoted(text.slice(i, end))
    start = i = end
  }
  code(text, start, text.length)
}

/** Past the quote closing the one at `open` ('' or "" inside is the quote character itself). */
function closingQuote(text: string, open: number, quote: string): number {
  let i = open + 1
  for (;;) {
    const close = text.indexOf(quote, i)
    if (close < 0) return text.length
    if (text[close + 1] !== quote) return close + 1
    i = close + 2
  }
}

function lineEnd(text: string, from: number): number {
  const end = text.indexOf('\n', from)
  return end < 0 ? text.length : end + 1
}
