import { z } from 'zod'

/**
 * Form and multipart bodies carry every value as text; these read the text forms of numbers,
 * booleans and lists so one schema validates JSON, urlencoded and multipart bodies alike (§4.1).
 * Values already of the right type (JSON) pass through unchanged.
 */
const number = (v: unknown) => (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v)
const boolean = (v: unknown) => (typeof v === 'string' && /^(true|false|on|off|1|0)$/i.test(v.trim()) ? /^(true|on|1)$/i.test(v.trim()) : v)
/** One value, a repeated key, a JSON array text (`'["a","b"]'`, what the original web client sends) or a blank (the empty list). */
const list = (v: unknown) => {
  if (typeof v !== 'string') return v
  const text = v.trim()
  if (text === '') return []
  if (text.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown
    } catch {
      return v
    }
  }
  return [text]
}

export const formNumber = <T extends z.ZodType>(schema: T) => z.preprocess(number, schema)
export const formBoolean = <T extends z.ZodType>(schema: T) => z.preprocess(boolean, schema)
export const formList = <T extends z.ZodType>(schema: T) => z.preprocess(list, schema)
