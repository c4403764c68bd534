/** An ILIKE pattern matching `text` anywhere (a case-insensitive contains), with `\`, `%` and `_` taken literally. */
export const containsPattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
