import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { z } from 'zod'
import { TEST_MASTER_KEYS } from './privacy/master-key.ts'
import type { MasterKeys } from './privacy/master-key.ts'

/** A master key as CRM_MASTER_KEY gives it: 32 bytes in base64 (or base64url). The message never quotes the value. */
function parseMasterKey(text: string, ctx: z.RefinementCtx): Buffer {
  const key = Buffer.from(text, 'base64')
  if (key.length !== 32) ctx.addIssue({ code: 'custom', message: 'expected 32 bytes in base64 (e.g. `openssl rand -base64 32`)' })
  return key
}
const MasterKey = z.string().transform(parseMasterKey)

const positiveMs = z.coerce.number().int().positive()

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().default('0.0.0.0'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  /** API processes sharing the port (node:cluster); 1: one process, no cluster primary. */
  WEB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  /** A streaming replica of DATABASE_URL's database: the API's GET requests read from it. */
  DATABASE_READ_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATA_DIR: z.string().default('./.data'),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  PG_POOL_SIZE: z.coerce.number().int().min(2).max(200).default(20),
  EVENT_STORE: z.enum(['postgres', 'kurrentdb']).default('postgres'),
  EVENTSTORE_URL: z.string().optional(),
  JWT_SECRET: z.string().min(32, 'JWT_SECRET must be at least 32 characters').optional(),
  // The master key that wraps the people's data keys (issue 31): 32 bytes, base64; the retired ones, comma-separated, during a rotation.
  CRM_MASTER_KEY: MasterKey.optional(),
  CRM_MASTER_KEYS_RETIRED: z.string().optional().transform((list, ctx) => (list ?? '').split(',').map((key) => key.trim()).filter(Boolean).map((key) => parseMasterKey(key, ctx))),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(30).max(86400).default(900),
  /** Seconds an access token is still accepted past its `exp` (clock drift, a request in flight as it expires). */
  ACCESS_TOKEN_LEEWAY_SECONDS: z.coerce.number().int().min(0).max(60).default(5),
  REFRESH_TOKEN_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  READ_YOUR_WRITES_TIMEOUT_MS: positiveMs.default(5000),
  /** Largest uploaded file (multipart bodies): larger answers 413. */
  MAX_UPLOAD_BYTES: z.coerce.number().int().positive().default(10 * 1024 * 1024),
  PROJECTION_POLL_MS: positiveMs.default(500),
  PROJECTION_BATCH_SIZE: z.coerce.number().int().min(1).max(10000).default(500),
  PROJECTION_LEADER_RETRY_MS: positiveMs.default(1000),
  /** How long a process's hold on its projection units lasts unrenewed: a dead process's units move within about this long. */
  PROJECTION_LEASE_MS: positiveMs.default(3000),
  /** `false`: this process applies no projection (it serves and follows the others' progress). */
  PROJECTION_APPLY: z.enum(['true', 'false']).default('true'),
  CLAIM_SWEEP_INTERVAL_MS: positiveMs.default(60_000),
  CLAIM_SWEEP_GRACE_MS: positiveMs.default(300_000),
  DUE_NOTIFY_INTERVAL_MS: positiveMs.default(60_000),
  READY_MAX_LAG_MS: positiveMs.default(10000),
  SHUTDOWN_TIMEOUT_MS: positiveMs.default(10000),
  SMTP_URL: z.url({ protocol: /^smtps?$/, error: 'expected an smtp:// or smtps:// URL' }).optional(),
  MAIL_FROM: z.string().trim().min(3).default('CRM <no-reply@localhost>'),
  MAGIC_LINK_BASE_URL: z.url({ protocol: /^https?$/ }).default('http://localhost:3000/auth/magic-link'),
  AUTH_RATE_LIMIT_MAX: z.coerce.number().int().min(1).max(10000).default(5),
  /** Most events one `as_of` board may replay; past it the request answers 400 rather than a partial board. */
  AS_OF_EVENT_BUDGET: z.coerce.number().int().min(1).default(20_000),
  /** Browser origins allowed to call the API (comma-separated, e.g. `https://app.example.com`); unset sends no CORS headers. */
  CORS_ORIGINS: z.string().optional(),
  GOOGLE_CLIENT_ID: z.string().optional(),
  GOOGLE_ISSUERS: z.string().default('https://accounts.google.com,accounts.google.com'),
  GOOGLE_JWKS_URL: z.url({ protocol: /^https?$/ }).default('https://www.googleapis.com/oauth2/v3/certs'),
  /** `1`: webhooks may target loopback, private and link-local addresses (a local receiver in development). */
  WEBHOOK_ALLOW_PRIVATE: z.enum(['0', '1', 'true', 'false'], { error: 'expected 1 or 0' }).default('0'),
  WEBHOOK_DELIVERY_KEEP: z.coerce.number().int().min(0).default(1000),
  WEBHOOK_DELIVERY_KEEP_DAYS: z.coerce.number().int().min(0).default(0),
  /** How long database backups are kept: an erased person's destroyed key lives on in backups until then (erasure receipts say when). */
  BACKUP_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(35),
})

/** `a, b,,c` → `['a', 'b', 'c']`: list-valued variables are comma-separated. */
const list = (value: string | undefined): string[] => (value ?? '').split(',').map((item) => item.trim()).filter(Boolean)

export type Config = Readonly<{
  env: 'development' | 'production' | 'test'
  host: string
  port: number
  webConcurrency: number
  databaseUrl: string | undefined
  databaseReadUrl: string | undefined
  dataDir: string
  embeddedPgPort: number
  pgPoolSize: number
  eventStore: 'postgres' | 'kurrentdb'
  eventStoreUrl: string | undefined
  jwtSecret: string
  accessTokenTtlSeconds: number
  refreshTokenTtlDays: number
  logLevel: string
  readYourWritesTimeoutMs: number
  /** BACKUP_RETENTION_DAYS: when an erased person's key has left the last backup. */
  backupRetentionDays: number
  /** CRM_MASTER_KEY (and CRM_MASTER_KEYS_RETIRED): what wraps the people's data keys (src/privacy/master-key.ts). Never logged. */
  masterKeys: MasterKeys
  maxUploadBytes: number
  projectionPollMs: number
  projectionBatchSize: number
  projectionLeaderRetryMs: number
  projectionLeaseMs: number
  projectionApply: boolean
  /** How often the scheduled processes' leader frees name claims no record holds (processes/claim-sweeper.ts), and how old such a claim must be. */
  claimSweepIntervalMs: number
  claimSweepGraceMs: number
  /** How often the scheduled processes' leader raises the notifications of due tasks and red deals (processes/due-notifier.ts). */
  dueNotifyIntervalMs: number
  readyMaxLagMs: number
  shutdownTimeoutMs: number
  /** Unset: magic-link mail goes to the log in development and test, and magic-link sign-in is off in production. */
  smtpUrl: string | undefined
  mailFrom: string
  magicLinkBaseUrl: string
  /** Requests per minute to each magic-link route, per client IP and email. */
  authRateLimitMax: number
  asOfEventBudget: number
  accessTokenLeewaySeconds: number
  /** Origins answered with CORS headers; empty: no CORS headers at all (same-origin only). */
  corsOrigins: readonly string[]
  /** Accepted `aud` values of Google ID tokens; empty turns Google sign-in off. */
  googleClientIds: readonly string[]
  googleIssuers: readonly string[]
  googleJwksUrl: string
  /** Off (the default): webhook URLs must resolve to public addresses, at create/change and at every delivery. */
  webhookAllowPrivate: boolean
  /** Delivery log entries kept per webhook (newest); 0: no count limit. */
  webhookDeliveryKeep: number
  /** Delivery log entries older than this many days are deleted; 0: no age limit. */
  webhookDeliveryKeepDays: number
}>

export type LoadedConfig = { config: Config; warnings: string[] }

export class ConfigError extends Error {}

/** Parses the environment once at start-up; every problem is reported together so a deploy fails with one clear message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const parsed = EnvSchema.safeParse(env)
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`)
  }
  const e = parsed.data
  const warnings: string[] = []
  if (e.DATABASE_READ_URL && !e.DATABASE_URL) {
    throw new ConfigError('Invalid configuration:\n  DATABASE_READ_URL: expected DATABASE_URL too (the primary the replica follows; the embedded cluster has no replica)')
  }
  if (e.EVENT_STORE === 'kurrentdb' && !e.EVENTSTORE_URL) {
    throw new ConfigError('Invalid configuration:\n  EVENTSTORE_URL: expected a connection string when EVENT_STORE=kurrentdb')
  }
  let jwtSecret = e.JWT_SECRET
  if (!jwtSecret) {
    if (e.NODE_ENV === 'production') {
      throw new ConfigError('Invalid configuration:\n  JWT_SECRET: expected a secret of at least 32 characters in production')
    }
    const dataDir = resolve(e.DATA_DIR)
    jwtSecret = e.NODE_ENV === 'test' ? randomBytes(32).toString('base64url') : developmentSecret(dataDir, DEV_SECRET_FILE)
    warnings.push(
      e.NODE_ENV === 'test'
        ? 'JWT_SECRET is not set: generated a random one for this process'
        : `JWT_SECRET is not set: generated a random one, kept in ${join(dataDir, DEV_SECRET_FILE)} so the CLI and restarts share it; set JWT_SECRET in production`,
    )
  }
  let masterKey = e.CRM_MASTER_KEY
  if (!masterKey) {
    masterKey = e.NODE_ENV === 'test' ? TEST_MASTER_KEYS.current : Buffer.from(developmentSecret(resolve(e.DATA_DIR), DEV_MASTER_KEY_FILE), 'base64url')
    if (e.NODE_ENV !== 'test') warnings.push(`CRM_MASTER_KEY is not set: generated a random one, kept in ${join(resolve(e.DATA_DIR), DEV_MASTER_KEY_FILE)}; set CRM_MASTER_KEY (32 bytes, base64) and keep it apart from the database's backups (docs/personal-data.md)`)
  }
  const webhookAllowPrivate = e.WEBHOOK_ALLOW_PRIVATE === '1' || e.WEBHOOK_ALLOW_PRIVATE === 'true'
  if (e.NODE_ENV === 'production' && webhookAllowPrivate) warnings.push('WEBHOOK_ALLOW_PRIVATE is on: webhooks may reach loopback, private and link-local addresses (cloud metadata included)')
  if (e.NODE_ENV === 'production' && !e.SMTP_URL) warnings.push('SMTP_URL is not set: magic-link sign-in is disabled (mail would otherwise only reach the log)')
  const config: Config = {
    env: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    webConcurrency: e.WEB_CONCURRENCY,
    databaseUrl: e.DATABASE_URL,
    databaseReadUrl: e.DATABASE_READ_URL,
    dataDir: resolve(e.DATA_DIR),
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    pgPoolSize: e.PG_POOL_SIZE,
    eventStore: e.EVENT_STORE,
    eventStoreUrl: e.EVENTSTORE_URL,
    jwtSecret,
    accessTokenTtlSeconds: e.ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlDays: e.REFRESH_TOKEN_TTL_DAYS,
    logLevel: e.LOG_LEVEL,
    readYourWritesTimeoutMs: e.READ_YOUR_WRITES_TIMEOUT_MS,
    backupRetentionDays: e.BACKUP_RETENTION_DAYS,
    masterKeys: { current: masterKey, retired: e.CRM_MASTER_KEYS_RETIRED },
    maxUploadBytes: e.MAX_UPLOAD_BYTES,
    projectionPollMs: e.PROJECTION_POLL_MS,
    projectionBatchSize: e.PROJECTION_BATCH_SIZE,
    projectionLeaderRetryMs: e.PROJECTION_LEADER_RETRY_MS,
    projectionLeaseMs: e.PROJECTION_LEASE_MS,
    projectionApply: e.PROJECTION_APPLY === 'true',
    claimSweepIntervalMs: e.CLAIM_SWEEP_INTERVAL_MS,
    claimSweepGraceMs: e.CLAIM_SWEEP_GRACE_MS,
    dueNotifyIntervalMs: e.DUE_NOTIFY_INTERVAL_MS,
    readyMaxLagMs: e.READY_MAX_LAG_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    magicLinkBaseUrl: e.MAGIC_LINK_BASE_URL,
    authRateLimitMax: e.AUTH_RATE_LIMIT_MAX,
    asOfEventBudget: e.AS_OF_EVENT_BUDGET,
    accessTokenLeewaySeconds: e.ACCESS_TOKEN_LEEWAY_SECONDS,
    corsOrigins: list(e.CORS_ORIGINS),
    googleClientIds: list(e.GOOGLE_CLIENT_ID),
    googleIssuers: list(e.GOOGLE_ISSUERS),
    googleJwksUrl: e.GOOGLE_JWKS_URL,
    webhookAllowPrivate,
    webhookDeliveryKeep: e.WEBHOOK_DELIVERY_KEEP,
    webhookDeliveryKeepDays: e.WEBHOOK_DELIVERY_KEEP_DAYS,
  }
  return { config: Object.freeze(config), warnings }
}

const DEV_SECRET_FILE = 'jwt-secret'

const DEV_MASTER_KEY_FILE = 'master-key'

/** Development only: one random secret per data directory and name, so the CLI and the server share it (CLI-issued tokens, the master key). */
function developmentSecret(dataDir: string, name: string): string {
  const file = join(dataDir, name)
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(dataDir, { recursive: true })
  const secret = randomBytes(32).toString('base64url')
  try {
    // 'wx': of two processes starting together, the first one's secret stands and the other reads it (a master key must never differ between them).
    writeFileSync(file, secret, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim()
    throw error
  }
  chmodSync(file, 0o600)
  return secret
}
