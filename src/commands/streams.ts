/** One aggregate's streams, `<category>-<id>`: the write side names them, projectors read the id back. */
export type StreamCategory = { stream(id: string): string; idOf(streamName: string): string }

export function streamCategory(category: string): StreamCategory {
  const prefix = `${category}-`
  return { stream: (id) => `${prefix}${id}`, idOf: (streamName) => streamName.slice(prefix.length) }
}
