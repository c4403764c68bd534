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
  const shape = shapeOf(text)
  if (!shape) return undefined
  let out = shape.parts[0]!
  for (let i = 0; i < shape.placeholders.length; i++) {
    const index = shape.placeholders[i]!
    if (index < 0 || index >= parameters.length) return undefined
    const literal = literalOf(parameters[index])
    if (literal === undefined) return undefined
    out += literal + shape.parts[i + 1]!
  }
  return out
}

/** Whether the statement answers no rows: its main statement (after any WITH list) is an INSERT, UPDATE or DELETE without RETURNING. */
export function returnsNoRows(text: string): boolean {
  return shapeOf(text)?.returnsNoRows ?? false
}

function literalOf(value: unknown): string | undefined {
  const prepared = prepareValue(value)
  if (prepared === null) return 'NULL'
  if (typeof prepared !== 'string') return undefined
  // As pg.escapeLiteral (an E'' string where a backslash must be doubled), without its loop per character.
  const quoted = `'${prepared.replaceAll("'", "''")}'`
  return prepared.includes('\\') ? ` E${quoted.replaceAll('\\', '\\\\')}` : quoted
}

/**
 * A statement's text cut at its placeholders (`parts` around `placeholders`, 0-based parameter
 * indexes), and whether it answers no rows; null for a text this does not scan. Kept per text: a
 * page's statements are the same few texts again and again (issue 36: scanning each was ~6% of the
 * projections' CPU), and the texts are the code's (values are parameters), so they are few.
 */
type Shape = { parts: string[]; placeholders: number[]; returnsNoRows: boolean }
const shapes = new Map<string, Shape | null>()
const MAX_SHAPES = 2000

function shapeOf(text: string): Shape | null {
  let shape = shapes.get(text)
  if (shape === undefined) {
    shape = scanShape(text)
    // Texts that vary with a page (multi-row VALUES) are many but bounded; a cache that filled up starts over.
    if (shapes.size >= MAX_SHAPES) shapes.clear()
    shapes.set(text, shape)
  }
  return shape
}

const MAIN_STATEMENTS = new Set(['select', 'insert', 'update', 'delete', 'merge', 'values', 'table'])
const WRITES = new Set(['insert', 'update', 'delete'])

function scanShape(text: string): Shape | null {
  if (/[\\]|\$[^0-9]|\$$/.test(text)) return null
  const parts: string[] = []
  const placeholders: number[] = []
  const words: string[] = []
  let depth = 0
  let part = ''
  scan(text, (code) => {
    let from = 0
    for (const token of code.matchAll(/\$(\d+)|[()]|[A-Za-z_][A-Za-z0-9_]*/g)) {
      if (token[1] !== undefined) {
        parts.push(part + code.slice(from, token.index))
        part = ''
        from = token.index + token[0].length
        placeholders.push(Number(token[1]) - 1)
      } else if (token[0] === '(') depth++
      else if (token[0] === ')') depth--
      else if (depth === 0) words.push(token[0].toLowerCase())
    }
    part += code.slice(from)
  }, (quoted) => {
    part += quoted
  })
  parts.push(part)
  // The main statement answers no rows when it is a write without RETURNING (a CTE's RETURNING, in parentheses, answers the statement, not the caller).
  const main = words.find((word) => MAIN_STATEMENTS.has(word))
  const returnsNoRows = main !== undefined && WRITES.has(main) && !words.includes('returning') && (words[0] === main || words[0] === 'with')
  return { parts, placeholders, returnsNoRows }
}

/**
 * Calls `code` for each stretch of `text` outside quotes and comments, `quoted` for each quoted
 * literal or identifier (with its quotes) and comment, in order.
 */
function scan(text: string, code: (part: string) => void, quoted: (part: string) => void): void {
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
    code(text.slice(start, i))
    quoted(text.slice(i, end))
    start = i = end
  }
  code(text.slice(start))
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
