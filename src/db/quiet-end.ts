import type pg from 'pg'

/**
 * Ends a dedicated connection we are done with. Its listeners go first: a server-side goodbye
 * (or the socket error of a dead server) must not reach handlers that would reconnect or report.
 */
export async function endQuietly(client: pg.Client): Promise<void> {
  client.removeAllListeners()
  client.on('error', () => {})
  await client.end().catch(() => {})
}
