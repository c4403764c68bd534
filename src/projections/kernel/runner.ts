import type { Kysely } from 'kysely'
import type pg from 'pg'
import type { Logger } from 'pino'
import type { Database } from '../../db/database.ts'
import { ProjectionLagError } from '../../errors.ts'
import { START, comparePositions, formatPosition, maxPosition, parsePosition } from '../../eventstore/event-store.ts'
import type { EventStore, Position } from '../../eventstore/event-store.ts'
import type { Notifications } from '../../eventstore/postgres-notifications.ts'
import { delay, untilAborted } from '../../eventstore/wakeup.ts'
import { readCheckpoints } from './checkpoints.ts'
import { followLog } from './follow.ts'
import type { Announcement } from './follow.ts'
import { createLeadership } from './leadership.ts'
import { LeaseLostError, leaseFence, leaseStore, processName } from './leases.ts'
import type { Held } from './leases.ts'
import { assertValidProjectors } from './projector.ts'
import type { Projector } from './projector.ts'
import { rebuildProjection } from './rebuild.ts'
import type { RebuildProgress } from './rebuild.ts'
import { createUnits } from './units.ts'

export type ProjectionRunnerOptions = {
  db: Kysely<Database>
  poolOptions: pg.PoolConfig
  store: EventStore
  projectors: readonly Projector[]
  logger: Logger
  batchSize: number
  pollMs: number
  leaderRetryMs: number
  /**
   * How long a process's hold on its projection units lasts without renewal (renewed every third of
   * it): a process that dies hands its units over within about this long.
   */
  leaseMs: number
  /** False: this process applies no projection (it serves, and follows the others' progress). */
  applies: boolean
  /**
   * Checkpoint announcements between processes (a NOTIFY channel): the leader announces each page
   * it commits, and a process that does not lead reads the checkpoints when told, so its writes
   * wait as briefly as the leader's. Without it, such a process polls the checkpoint table.
   */
  checkpointNotices?: Notifications
}

export type ProjectionRunner = {
  readonly projectors: readonly Projector[]
  /** This process's name in the lease tables. */
  readonly owner: string
  /** The projection units (projectors) this process applies, with their lease epochs. */
  readonly held: Held
  /** Holds the lock of the scheduled processes (escalations, recurring invoices, sweeps), which run in one process at a time. */
  readonly isLeader: boolean
  /** The last error of each projector that is currently failing. */
  readonly failures: ReadonlyMap<string, string>
  /**
   * Projectors whose new version is being built beside the old version's tables, which keep
   * serving reads meanwhile (blue-green); progress is null where it is not known (a process that
   * does not lead sees only that the stored version differs).
   */
  readonly rebuilds: ReadonlyMap<string, RebuildProgress | null>
  start(): void
  stop(): Promise<void>
  /**
   * Resolves once every projector has processed the log up to `position` (with `eventTypes`, every
   * projector that applies one of them); rejects with ProjectionLagError after `timeoutMs`.
   */
  waitFor(position: Position, timeoutMs: number, eventTypes?: ReadonlySet<string>): Promise<void>
  /**
   * Resolves once every read model's tables exist (each projector has a checkpoint, written with
   * its tables by whichever process leads); rejects with ProjectionLagError after `timeoutMs`.
   * Reads wait for it, so a request just after a first start answers rather than failing.
   */
  tablesReady(timeoutMs: number): Promise<void>
}

/** `names`: the read models whose progress the waiter needs (one shared array per set of event types). */
type Waiter = { position: Position; names: readonly string[]; resolve: () => void }

const FOLLOWER_POLL_MS = 20
/** With announcements, polling only covers one that was lost (a dropped LISTEN connection). */
const FOLLOWER_FALLBACK_POLL_MS = 250

export function createProjectionRunner(options: ProjectionRunnerOptions): ProjectionRunner {
  const { db, store, projectors, logger, batchSize, pollMs, checkpointNotices: notices } = options
  assertValidProjectors(projectors)
  const log = logger.child({ component: 'projections' })
  const leadership = createLeadership(options.poolOptions, options.leaderRetryMs)
  const owner = processName()
  const names = projectors.map((p) => p.name)
  const units = createUnits({
    leases: leaseStore(db, owner, options.leaseMs),
    owner,
    units: projectors.map((p) => ({ name: p.name, weight: p.eventTypes.length })),
    leaseMs: options.leaseMs,
    log,
    applyHeld: (held, signal) => {
      announced = undefined
      return follow(held, signal)
    },
  })
  const holds = (name: string) => units.held.has(name)
  const holdsAll = () => units.held.size === projectors.length
  const reached = new Map<string, Position>()
  const failures = new Map<string, string>()
  const waiters = new Set<Waiter>()
  const stopping = new AbortController()
  let running: Promise<void> | undefined
  let followerPoll: NodeJS.Timeout | undefined
  let stopHearing: (() => void) | undefined
  /** The last position announced to followers as reached by every read model. */
  let announced: Position | undefined

  const rebuilds = new Map<string, RebuildProgress | null>()
  const rebuildFailures = new Map<string, unknown>()
  let rebuildQueue = Promise.resolve()

  // A read model being rebuilt serves its old version's tables as they stand: writes do not wait for
  // it (they would time out for the whole rebuild), so read-your-writes holds for every other one.
  const caughtUp = (position: Position, all: Position | null | undefined) => all === null || (all !== undefined && comparePositions(all, position) >= 0)
  const settleWaiters = () => {
    // Waiters of one kind of write share their names array: each distinct set is reduced once.
    const reachedOf = new Map<readonly string[], Position | null | undefined>()
    for (const waiter of waiters) {
      if (!reachedOf.has(waiter.names)) reachedOf.set(waiter.names, reachedBy(waiter.names))
      if (caughtUp(waiter.position, reachedOf.get(waiter.names))) waiter.resolve()
    }
  }

  /**
   * The read models a write of `eventTypes` shows in, cached per set of types (a handful of kinds
   * of write repeat). A write waits for these alone: waiting for every read model made each write
   * as slow as the slowest process's announcement of units its events never reach.
   */
  const namesApplying = new Map<string, readonly string[]>()
  function readModelsApplying(eventTypes: ReadonlySet<string> | undefined): readonly string[] {
    if (eventTypes === undefined) return names
    const key = [...eventTypes].sort().join(',')
    let found = namesApplying.get(key)
    if (!found) {
      found = projectors.filter((p) => p.eventTypes.some((type) => eventTypes.has(type))).map((p) => p.name)
      namesApplying.set(key, found)
    }
    return found
  }

  /**
   * A page moves every lane's position, one call each (~30 per page): the waiters and the
   * announcement are settled once after them (a microtask later), not once per lane, which cost
   * lanes × waiters × projectors position comparisons per page (issue 36: CPU per create).
   */
  let settleQueued = false
  function markReached(name: string, position: Position): void {
    const at = reached.get(name)
    // Monotonic: a checkpoint read or another process's notice may be older than what is known here.
    if (!at || comparePositions(at, position) < 0) reached.set(name, position)
    if (settleQueued) return
    settleQueued = true
    queueMicrotask(settleReached)
  }

  function settleReached(): void {
    settleQueued = false
    settleWaiters()
    // What every read model reflects now, from memory: a projector with nothing to apply saves its
    // checkpoint only when idle, so the checkpoint table alone would keep a follower waiting for it.
    // Coalesced: at most one NOTIFY in flight however many projectors and pages commit meanwhile.
    // Only when that position moved: it moves when the slowest lane does, not at every lane's page
    // (one create's events pass through every lane; announcing each was ~17 NOTIFYs per create).
    // A process that applies some units only names them: "position name,name,…".
    // A page's own commit carries its announcement (announceWithin); this one sends what that did not.
    const due = dueAnnouncement()
    if (due) {
      announced = due.position
      notices!.appended(due.message)
    }
  }

  /** What the held units reached (or will, `reaching`), if it is past what was announced. */
  function dueAnnouncement(reaching?: ReadonlyMap<string, Position>): { position: Position; message: string } | undefined {
    if (units.held.size === 0 || !notices) return undefined
    const mine = reachedBy([...units.held.keys()], reaching)
    if (!mine || (announced && comparePositions(mine, announced) <= 0)) return undefined
    return { position: mine, message: holdsAll() ? formatPosition(mine) : `${formatPosition(mine)} ${[...units.held.keys()].join(',')}` }
  }

  /**
   * The announcement of a page, in its transaction: the NOTIFY is delivered at its commit, and
   * costs no round trip and no transaction of its own (issue 36, item 2).
   */
  function announceWithin(reaching: ReadonlyMap<string, Position>): Announcement | undefined {
    const due = dueAnnouncement(reaching)
    if (!due) return undefined
    const notice = notices!.within(due.message)
    return {
      statement: notice.statement,
      committed() {
        announced = announced ? maxPosition(announced, due.position) : due.position
        notice.committed()
      },
    }
  }

  /**
   * The lowest position the named read models reached (those being rebuilt aside), or will have
   * reached where `reaching` says further: undefined while one has not started.
   */
  function reachedBy(names: readonly string[], reaching?: ReadonlyMap<string, Position>): Position | null | undefined {
    let lowest: Position | null = null
    for (const name of names) {
      if (rebuilds.has(name)) continue
      const known = reached.get(name)
      const next = reaching?.get(name)
      const at = known && next ? maxPosition(known, next) : (known ?? next)
      if (!at) return undefined
      if (!lowest || comparePositions(at, lowest) < 0) lowest = at
    }
    return lowest
  }

  /** Which of `names` have not reached `position`, and where each is known to be: what a lag error says. */
  function behind(names: readonly string[], position: Position): string[] {
    return names.flatMap((name) => {
      const at = reached.get(name)
      if (rebuilds.has(name) || (at && comparePositions(at, position) >= 0)) return []
      const where = at ? `at ${formatPosition(at)}` : 'not started'
      return [`${name} ${where}${holds(name) ? '' : ' (another process applies it)'}`]
    })
  }

  /** Another process says the read models it applies (all of them when it names none) reflect the log up to `position`. */
  function markAnnounced(position: Position, announcedNames: readonly string[] = names): void {
    for (const name of announcedNames) {
      const at = reached.get(name)
      if (at && comparePositions(at, position) >= 0) continue
      if (names.includes(name)) reached.set(name, position)
    }
    settleWaiters()
  }

  async function readReached(): Promise<void> {
    const checkpoints = await readCheckpoints(db).catch(() => [])
    for (const c of checkpoints) {
      const projector = projectors.find((p) => p.name === c.name)
      // What this process applies, it knows better than the table (idle checkpoints lag).
      if (!projector || holds(c.name)) continue
      if (c.version === projector.version) {
        rebuilds.delete(c.name)
        markReached(c.name, c.position)
      } else if (!rebuilds.has(c.name)) rebuilds.set(c.name, null)
    }
    settleWaiters()
  }

  /**
   * The units other processes apply: their progress comes from their announcements, heard all the
   * time (a write here must not wait for a fallback poll because the announcement it needed came
   * before it started waiting), and from the checkpoint table, polled only while someone waits.
   */
  function hearAnnouncement(message: string | undefined): void {
    if (holdsAll()) return
    const [at, list] = message?.split(' ') ?? []
    const position = at === undefined ? undefined : parsePosition(at)
    if (position) markAnnounced(position, list?.split(','))
    else void readReached()
  }

  /**
   * Runs while anyone waits, even while this process applies every unit (its own pages settle the
   * waiters then): units can change hands during a wait, and a wait that began while this process
   * held them all would otherwise never read the progress of the process that took some over (seen
   * as a 30 s lag error in claim-sweeper.test.ts, two runners without notices).
   */
  function pollCheckpointsWhileWaiting(): void {
    if (followerPoll) return
    followerPoll = setInterval(async () => {
      if (waiters.size === 0) {
        clearInterval(followerPoll)
        followerPoll = undefined
        return
      }
      if (!holdsAll()) await readReached()
    }, notices ? FOLLOWER_FALLBACK_POLL_MS : FOLLOWER_POLL_MS)
  }

  function waitFor(position: Position, timeoutMs: number, eventTypes?: ReadonlySet<string>): Promise<void> {
    const waitedFor = readModelsApplying(eventTypes)
    if (caughtUp(position, reachedBy(waitedFor))) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        position,
        names: waitedFor,
        resolve: () => {
          clearTimeout(timer)
          waiters.delete(waiter)
          resolve()
        },
      }
      const timer = setTimeout(() => {
        waiters.delete(waiter)
        reject(new ProjectionLagError(position, timeoutMs, behind(waitedFor, position)))
      }, timeoutMs)
      waiters.add(waiter)
      pollCheckpointsWhileWaiting()
    })
  }

  /**
   * Creates a projector's tables on first run. When its version changed, builds the new version
   * beside the old one's tables (blue-green): answers undefined until the swap, while the old tables
   * keep serving reads; a failed build is thrown once (followLog backs off) and then started again.
   */
  async function prepare(projector: Projector, signal: AbortSignal): Promise<Position | undefined> {
    const { name } = projector
    const stored = (await readCheckpoints(db)).find((c) => c.name === name)
    if (stored && stored.version === projector.version) {
      rebuilds.delete(name)
      return stored.position
    }
    if (!stored) {
      log.info({ projector: name, to: projector.version }, 'building projection from the log')
      const result = await rebuildProjection(db, store, projector, batchSize, { signal })
      log.info({ projector: name, events: result.events, ms: result.ms }, 'projection built')
      return result.position
    }
    const failure = rebuildFailures.get(name)
    if (failure !== undefined) {
      rebuildFailures.delete(name)
      throw failure
    }
    if (!rebuilds.has(name)) buildBeside(projector, stored.version, signal)
    return undefined
  }

  function buildBeside(projector: Projector, from: number, signal: AbortSignal): void {
    const { name } = projector
    log.info({ projector: name, from, to: projector.version }, 'building the new version beside the old one, which keeps serving reads')
    rebuilds.set(name, null)
    settleWaiters()
    // One rebuild at a time: each holds a connection for its swap while reading through another.
    rebuildQueue = rebuildQueue.then(async () => {
      try {
        const result = await rebuildProjection(db, store, projector, batchSize, { signal, onProgress: (progress) => rebuilds.set(name, progress) })
        log.info({ projector: name, events: result.events, ms: result.ms }, 'new version swapped in at the head of the log')
      } catch (error) {
        if (!signal.aborted) rebuildFailures.set(name, error)
      } finally {
        // Swapped in (or failed): writes wait for this read model again, until its lane has followed the log.
        rebuilds.delete(name)
      }
    })
  }

  /** One term: the held units' projectors follow the log, each page fenced by their lease epochs. */
  const follow = (held: Held, signal: AbortSignal) =>
    followLog(
      {
        db,
        store,
        projectors: projectors.filter((p) => held.has(p.name)),
        batchSize,
        pollMs,
        log,
        prepare,
        fence: leaseFence(owner, held),
        announce: announceWithin,
        reached: markReached,
        failed: (name, error) => {
          if (error instanceof LeaseLostError) units.replan()
          failures.set(name, error instanceof Error ? error.message : String(error))
        },
        recovered: (name) => failures.delete(name),
      },
      signal,
    ).finally(() => {
      for (const name of held.keys()) failures.delete(name)
    })

  /** The scheduled processes' lock: held by one process at a time, taken over when its holder dies. */
  async function lead(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        await leadership.acquire(stopping.signal)
      } catch {
        return
      }
      if (stopping.signal.aborted) return
      log.info('this process now runs the scheduled processes')
      await Promise.race([leadership.lost(), untilAborted(stopping.signal)])
      if (!stopping.signal.aborted) log.warn('lost the scheduled processes\' lock (lock connection closed)')
    }
  }

  let tablesExist = false
  async function tablesReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!tablesExist) {
      const names = new Set((await readCheckpoints(db)).map((c) => c.name))
      tablesExist = projectors.every((p) => names.has(p.name))
      if (tablesExist) return
      if (Date.now() >= deadline) throw new ProjectionLagError(START, timeoutMs)
      await delay(FOLLOWER_POLL_MS)
    }
  }

  return {
    projectors,
    owner,
    get held() {
      return units.held
    },
    tablesReady,
    get isLeader() {
      return leadership.isLeader
    },
    failures,
    rebuilds,
    start() {
      for (const p of projectors) if (!reached.has(p.name)) reached.set(p.name, START)
      stopHearing ??= notices?.subscribe(hearAnnouncement)
      running ??= Promise.all([lead(), options.applies ? units.run(stopping.signal) : undefined]).then(() => {})
    },
    async stop() {
      stopping.abort()
      stopHearing?.()
      clearInterval(followerPoll)
      await running
      await rebuildQueue
      await leadership.release()
    },
    waitFor,
  }
}
