import type { Transaction } from 'kysely'
import type { FreshTables } from '../../db/copy-rows.ts'
import type { Database, Db } from '../../db/database.ts'
import type { RecordedEvent } from '../../eventstore/event-store.ts'

/**
 * A read model kept in PostgreSQL. It owns its tables (created by `createTables`, never by a
 * migration: when its logic changes, bump `version` and it is rebuilt from the log), and applies
 * events idempotently through kysely. Table names are unqualified: a rebuild runs the same code
 * with a search_path pointing at a fresh schema, then swaps the tables in.
 */
export interface Projector {
  /** Lowercase identifier, also used for the rebuild schema. */
  readonly name: string
  readonly version: number
  readonly eventTypes: readonly string[]
  readonly tables: readonly string[]
  createTables(db: Db): Promise<void>
  /**
   * Optional: the indexes only the read model's queries use (never a key an ON CONFLICT names, nor a
   * column an apply statement looks rows up by). A rebuild creates them once after the replay, with
   * a sort, rather than maintaining them row by row; an index left in `createTables` costs nothing
   * more than before.
   */
  createIndexes?(db: Db): Promise<void>
  /**
   * Live, a write that answers no rows is held and sent with the page's next statement that answers
   * rows or with its COMMIT (kernel/page-writes.ts): its row count (numUpdatedRows and the like) is
   * not known here, so apply must not branch on one; it reads rows instead, which see every write before them.
   */
  apply(trx: Transaction<Database>, event: RecordedEvent): Promise<void>
  /**
   * Optional: applies a whole page, in log order, with fewer statements than one per event (a
   * replay is bound by round trips otherwise). Must leave the same rows as `apply` one by one.
   * `fresh` is given during a rebuild's replay, into tables it created: rows no earlier event of the
   * log wrote (a stream's creation) may go through it (insertRowsOnce takes it), COPY rather than INSERT.
   */
  applyBatch?(trx: Transaction<Database>, events: readonly RecordedEvent[], fresh?: FreshTables): Promise<void>
}

// Keeps a multi-row statement under PostgreSQL's 65,535 bind parameters for any row width we use.
const MAX_RUN = 1000

/**
 * The shortest run worth a batch statement. A run's statements (a JSON recordset joined to the
 * table, rollup deltas summed in a CTE) cost more for one or two events than the plain statements
 * `apply` sends per event: at 1 client, where a page holds one PATCH or one move, batching every
 * run took a PATCH's read-your-writes wait from 3.6 to 15 ms (docs/performance.md).
 */
export const BATCH_FROM = 4

/**
 * For `applyBatch`: consecutive events of `type` (a type name, or a test of the event) go to
 * `applyRun` together (e.g. one multi-row INSERT), every other event, and the events of a run
 * shorter than BATCH_FROM, to `applyOne`, so the log order between them is kept.
 * `anyLength`: the events whose run statement is the very one `applyOne` sends for each (a
 * creation's INSERT, one row or many): a run of these alone goes to `applyRun` however short, so a
 * page of two or three creates under load sends one statement, not one per create.
 */
export async function applyInRuns(
  events: readonly RecordedEvent[],
  type: string | ((event: RecordedEvent) => boolean),
  applyRun: (run: RecordedEvent[]) => Promise<void>,
  applyOne: (event: RecordedEvent) => Promise<void>,
  anyLength?: (event: RecordedEvent) => boolean,
): Promise<void> {
  const inRun = typeof type === 'string' ? (event: RecordedEvent) => event.type === type : type
  let run: RecordedEvent[] = []
  const flush = async () => {
    if (run.length >= BATCH_FROM || (run.length > 0 && anyLength && run.every(anyLength))) await applyRun(run)
    else for (const event of run) await applyOne(event)
    run = []
  }
  for (const event of events) {
    if (!inRun(event)) {
      await flush()
      await applyOne(event)
      continue
    }
    run.push(event)
    if (run.length === MAX_RUN) await flush()
  }
  await flush()
}

/** What a projector's name may be: also what the kernel inlines into SQL text as a literal (checkpoints.ts). */
export const PROJECTOR_NAME = /^[a-z][a-z0-9_]{0,40}$/

export function assertValidProjectors(projectors: readonly Projector[]): void {
  const seen = new Set<string>()
  for (const p of projectors) {
    if (!PROJECTOR_NAME.test(p.name)) throw new Error(`Expected projector name "${p.name}" to match ${PROJECTOR_NAME}`)
    if (seen.has(p.name)) throw new Error(`Expected unique projector names, "${p.name}" appears twice`)
    seen.add(p.name)
  }
}
