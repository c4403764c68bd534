import type { Test } from 'tap'

const stacks = new WeakMap<Test, (() => unknown)[]>()

/**
 * Registers cleanup that runs in reverse order of setup (tap runs teardowns in the order they were
 * added): the app closes before the runner stops, the runner before its database is dropped.
 */
export function onTeardown(t: Test, fn: () => unknown): void {
  let stack = stacks.get(t)
  if (!stack) {
    const created: (() => unknown)[] = []
    stack = created
    stacks.set(t, created)
    t.teardown(async () => {
      while (created.length) await created.pop()!()
    })
  }
  stack.push(fn)
}
