import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, FastCheck as fc, Fiber } from "effect"
import * as GroupCommit from "../src/internal/groupCommit.js"

/** A commit that records its groups, fails any group holding a negative item, and waits for `gate` first. */
const recorder = (gate?: Deferred.Deferred<void>) => {
  const groups: Array<ReadonlyArray<number>> = []
  const commit = (items: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      if (gate !== undefined) yield* Deferred.await(gate)
      if (items.some((i) => i < 0)) return yield* Effect.fail(`refused ${items.join(",")}`)
      groups.push(items)
      return items.map((i) => i * 10)
    })
  return { commit, groups }
}

/** Lets every forked fiber run up to where it waits. */
const settled = Effect.repeatN(Effect.yieldNow(), 50)

/** A group commit over `commit` whose callers prepare nothing: submitting an item answers its outcome. */
const open = (
  commit: (items: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<number>, string>,
  maxGroup: number,
  maxTurns = 0
) =>
  Effect.map(
    GroupCommit.make(commit, { maxGroup, maxTurns }),
    (group) => (item: number) => Effect.map(group.submit(Effect.succeed([item, item] as const)), ([outcome]) => outcome)
  )

/** Two macrotask turns of the event loop. */
const macrotasks = Effect.repeatN(Effect.async<void>((resume) => void setImmediate(() => resume(Effect.void))), 1)

describe("GroupCommit", () => {
  it.scoped("a lone call commits at once, alone", () =>
    Effect.gen(function*() {
      const { commit, groups } = recorder()
      const submit = yield* open(commit, 8)
      expect(yield* submit(1)).toBe(10)
      expect(yield* submit(2)).toBe(20)
      expect(groups).toEqual([[1], [2]])
    }))

  it.scoped("calls arriving during a commit share the next one, at most maxGroup each", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { commit, groups } = recorder(gate)
      const submit = yield* open(commit, 4)
      const first = yield* Effect.fork(submit(0))
      yield* Effect.yieldNow()
      const rest = yield* Effect.fork(Effect.forEach([1, 2, 3, 4, 5, 6], submit, { concurrency: "unbounded" }))
      yield* settled
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(first)).toBe(0)
      expect(yield* Fiber.join(rest)).toEqual([10, 20, 30, 40, 50, 60])
      expect(groups).toEqual([[0], [1, 2, 3, 4], [5, 6]])
    }))

  it.scoped("a failing group is committed again one by one: only the failing item fails", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { commit, groups } = recorder(gate)
      const submit = yield* open(commit, 8)
      const first = yield* Effect.fork(submit(0))
      yield* Effect.yieldNow()
      const rest = yield* Effect.fork(
        Effect.all([1, -2, 3].map((i) => Effect.either(submit(i))), { concurrency: "unbounded" })
      )
      yield* settled
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      expect(yield* Fiber.join(rest)).toEqual([Either.right(10), Either.left("refused -2"), Either.right(30)])
      expect(groups).toEqual([[0], [1], [3]])
    }))

  it.scoped("an item is committed even if its caller is interrupted while it waits", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { commit, groups } = recorder(gate)
      const submit = yield* open(commit, 8)
      const waiting = yield* Effect.fork(submit(7))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(waiting)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* submit(8)).toBe(80)
      expect(groups).toEqual([[7], [8]])
    }))

  it.scoped("a group waits for callers still preparing, for at most maxTurns turns of the event loop", () =>
    Effect.gen(function*() {
      const grouped = (maxTurns: number) =>
        Effect.gen(function*() {
          const { commit, groups } = recorder()
          const group = yield* GroupCommit.make(commit, { maxGroup: 8, maxTurns })
          yield* Effect.all([
            group.submit(Effect.succeed([1, "quick"] as const)),
            group.submit(Effect.as(macrotasks, [2, "slow"] as const))
          ], { concurrency: "unbounded" })
          return groups
        })
      expect(yield* grouped(16)).toEqual([[1, 2]])
      expect(yield* grouped(0)).toEqual([[1], [2]])
    }))

  it.scoped("a caller whose preparation fails commits nothing and holds no group back", () =>
    Effect.gen(function*() {
      const { commit, groups } = recorder()
      const group = yield* GroupCommit.make(commit, { maxGroup: 8, maxTurns: 1_000_000 })
      const answers = yield* Effect.all([
        Effect.either(group.submit(Effect.succeed([1, "a"] as const))),
        Effect.either(group.submit(Effect.zipRight(macrotasks, Effect.fail("invalid"))))
      ], { concurrency: "unbounded" })
      expect(answers).toEqual([Either.right([10, "a"]), Either.left("invalid")])
      expect(groups).toEqual([[1]])
    }))

  it.effect.prop("every item of any concurrent burst is committed exactly once, and answered its own outcome", [
    fc.array(fc.integer({ min: -3, max: 1_000 }), { maxLength: 60 }),
    fc.integer({ min: 1, max: 16 })
  ], ([items, maxGroup]) =>
    Effect.gen(function*() {
      const { commit, groups } = recorder()
      const submit = yield* open(commit, maxGroup)
      const answers = yield* Effect.all(items.map((i) => Effect.either(submit(i))), { concurrency: "unbounded" })
      expect(answers).toEqual(items.map((i) => i < 0 ? Either.left(`refused ${i}`) : Either.right(i * 10)))
      expect(groups.flat().sort((a, b) => a - b)).toEqual(items.filter((i) => i >= 0).sort((a, b) => a - b))
      for (const group of groups) expect(group.length).toBeLessThanOrEqual(maxGroup)
    }).pipe(Effect.scoped))
})
