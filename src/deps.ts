import type { Logger } from 'pino'
import type { Config } from './config.ts'
import type { Db } from './db/database.ts'
import type { ReadReplica } from './db/read-replica.ts'
import type { EventStore } from './eventstore/event-store.ts'
import type { FileStore } from './files/file-store.ts'
import type { MailTransport } from './identity/mail.ts'
import type { Lookups } from './lookups/lookups.ts'
import type { ProjectionRunner } from './projections/kernel/runner.ts'

/**
 * What the service runs on, built once by the composition root (runtime.ts) and handed to the HTTP
 * app, the CLI and the use cases alike: no use case needs an HTTP request to reach any of it.
 */
export type Deps = {
  config: Config
  db: Db
  store: EventStore
  projections: ProjectionRunner
  /** Set with DATABASE_READ_URL: the API's GET requests read from this streaming replica (`db` routes them). */
  readReplica?: ReadReplica
  logger: Logger
  /** Injected so tests can fix time; deciders receive it through commands. */
  clock: () => Date
  /** Sign-in mail; when absent, chosen from the config (SMTP, or the log outside production). */
  mail?: MailTransport
  /** Membership, organization and custom field lookups, cached per process; when absent, plain queries. */
  lookups?: Lookups
  /** Uploaded files; when absent, on disk under DATA_DIR/attachments. */
  files?: FileStore
}
