import pino from 'pino'
import type { Logger } from 'pino'

/** Structured JSON logs; credentials are redacted wherever a serializer might include headers. */
export function createLogger(level: string, destination: 1 | 2 = 1): Logger {
  return pino(
    {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.token', 'req.headers.cookie', '*.password', '*.token', '*.access_token', '*.refresh_token', '*.api_key', '*.apikey'],
      censor: '[redacted]',
    },
    },
    pino.destination(destination),
  )
}
