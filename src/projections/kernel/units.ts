import type { Logger } from 'pino'
import { createWakeup } from '../../eventstore/wakeup.ts'
import { shareOf } from './leases.ts'
import type { Held, LeaseStore, Unit } from './leases.ts'

export type UnitsOptions = {
  leases: LeaseStore
  owner: string
  /** Every unit, in registry order: the same list in every process. */
  units: readonly Unit[]
  leaseMs: number
  log: Logger
  /** Applies the held units until `signal` aborts: one term, restarted whenever the held set changes. */
  applyHeld(held: Held, signal: AbortSignal): Promise<void>
}

export type Units = {
  readonly held: Held
  /** Runs until `signal` aborts, then stops applying and gives every unit up at once. */
  run(signal: AbortSignal): Promise<void>
  /** Looks at the leases now rather than at the next renewal (a page found a unit lost). */
  replan(): void
}

/** The first look again at a share not fully held; doubled each time, up to a renewal period. */
const MIN_RETRY_MS = 25

/**
 * Which projection units this process applies. Every third of a lease period it says it is alive,
 * renews what it holds, works out its share from the live members, gives up what is beyond its
 * share (after it stopped applying it) and takes what of its share nobody holds. A process that dies
 * stops renewing: its units are free once their leases run out, and its share goes to the others.
 */
export function createUnits(options: UnitsOptions): Units {
  const { leases, owner, units, leaseMs, log } = options
  /** Every unit this process holds a lease on, renewed at each tick: those applied, and those being handed on or taken up. */
  let held: Held = new Map()
  let term: { stop: AbortController; done: Promise<void> } | undefined
  /** A change of the applied units under way: the old term drains, then the new one starts. */
  let switching: Promise<void> | undefined
  let wake: (() => void) | undefined
  /** While part of the share is held elsewhere (being handed over, or a dead process's lease running out), look again sooner. */
  let retryMs = 0
  const wakeup = createWakeup((listener) => ((wake = listener), () => (wake = undefined)))

  async function endTerm(): Promise<void> {
    if (!term) return
    term.stop.abort()
    await term.done
    term = undefined
  }

  function startTerm(units: Held): void {
    if (units.size === 0) return
    const stop = new AbortController()
    const done = options.applyHeld(units, stop.signal).catch((error: unknown) => log.error({ err: error }, 'projection term failed'))
    term = { stop, done }
  }

  /**
   * Renewal never waits for a term to drain (a page, or a read model's first build, may take long):
   * a change is started here and completes on its own, and later ticks keep renewing meanwhile.
   */
  async function tick(): Promise<void> {
    const share = new Set(shareOf(units, await leases.heartbeat(), owner))
    const renewed = await leases.renew(held)
    const lost = [...held.keys()].filter((name) => !renewed.has(name))
    held = renewed
    if (lost.length) log.warn({ units: lost }, 'projection units lost to another process')
    if (switching) return
    const excess = [...held.keys()].filter((name) => !share.has(name))
    const gained = await leases.acquire([...share].filter((name) => !held.has(name)))
    held = new Map([...held, ...gained])
    const missing = [...share].some((name) => !held.has(name))
    retryMs = missing ? Math.min(leaseMs / 3, Math.max(MIN_RETRY_MS, retryMs * 2)) : 0
    if (lost.length + excess.length + gained.size === 0) return
    log.info({ gained: [...gained.keys()], released: excess, lost }, 'projection units changed hands')
    switching = (async () => {
      await endTerm()
      await leases.release(excess)
      held = new Map([...held].filter(([name]) => !excess.includes(name)))
      startTerm(new Map(held))
    })()
      .catch((error: unknown) => log.warn({ err: error }, 'projection units could not change hands'))
      .finally(() => (switching = undefined))
  }

  return {
    get held() {
      return held
    },
    replan: () => wake?.(),
    async run(signal) {
      while (!signal.aborted) {
        wakeup.arm()
        // A database that does not answer: keep what is held (its leases run out on their own) and try again.
        await tick().catch((error: unknown) => log.warn({ err: error }, 'projection leases could not be renewed'))
        await wakeup.sleep(retryMs || leaseMs / 3, signal)
      }
      wakeup.close()
      await switching
      await endTerm()
      const given = [...held.keys()]
      held = new Map()
      await leases.release(given).catch(() => {})
      await leases.leave().catch(() => {})
    },
  }
}
