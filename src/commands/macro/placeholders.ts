/**
 * A macro's `%token%` placeholders: the seven the original expands, and nothing else. Rendering is
 * substitution only (no template language, no code runs). A token outside the set stays literal in
 * the text, so the agent sees it, and is reported by name (`unknownPlaceholders`): the original only
 * flagged it on the macro, and its render answer said nothing.
 */

/** The supported set, in the order the composer shows it, each with what it becomes: the list route answers it verbatim. */
export const PLACEHOLDERS = [
  { token: '%customer_name%', resolves: "The case's first contact" },
  { token: '%customer_email%', resolves: "That contact's email" },
  { token: '%case_id%', resolves: 'The case number' },
  { token: '%case_subject%', resolves: 'The case title' },
  { token: '%agent_name%', resolves: 'You: your name, or the local part of your email when you have none' },
  { token: '%agent_email%', resolves: 'Your email' },
  { token: '%org_name%', resolves: 'The organisation name' },
] as const

export type PlaceholderName = (typeof PLACEHOLDERS)[number]['token'] extends `%${infer Name}%` ? Name : never
/** What each placeholder becomes for one application; missing data is the empty string. */
export type PlaceholderValues = Record<PlaceholderName, string>

const SUPPORTED = new Set<string>(PLACEHOLDERS.map((p) => p.token.slice(1, -1)))
const TOKEN = /%([a-zA-Z_][a-zA-Z0-9_]*)%/g

/** The `%token%`s of `body` outside the supported set, each once, in order of appearance. */
export function unknownPlaceholders(body: string): string[] {
  const names = [...body.matchAll(TOKEN)].map((match) => match[1]!).filter((name) => !SUPPORTED.has(name))
  return [...new Set(names)].map((name) => `%${name}%`)
}

/** `body` with each supported placeholder replaced by its value; unknown ones left as written. */
export function renderMacro(body: string, values: PlaceholderValues): string {
  return body.replace(TOKEN, (token, name: string) => (SUPPORTED.has(name) ? values[name as PlaceholderName] : token))
}
