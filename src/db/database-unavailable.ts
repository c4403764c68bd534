/** The database is down or restarting (its connection refused, reset or terminated): what failed may succeed in a moment. */
const DATABASE_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'])

export function databaseUnavailable(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string }
  return DATABASE_UNAVAILABLE.has(code ?? '') || /^(Connection terminated|Client has encountered a connection error)/.test(message ?? '')
}
