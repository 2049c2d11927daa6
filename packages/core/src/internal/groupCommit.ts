import { Deferred, Effect, Exit, FiberId, Queue, type Scope } from "effect"
import { turn } from "./eventLoop.js"

/** Commits what its callers prepare, in groups (see {@link make}). */
export interface GroupCommit<A, B, E> {
  /**
   * Runs `prepare`, then commits the item it produced and answers that item's outcome with the
   * value `prepare` produced beside it. Fails with `prepare`'s error, having committed nothing.
   */
  readonly submit: <X, E2, R>(
    prepare: Effect.Effect<readonly [A, X], E2, R>
  ) => Effect.Effect<readonly [B, X], E | E2, R>
}

/**
 * Group commit. Each item is committed through `commit`, and one commit takes every item that is
 * waiting (at most `maxGroup`), so concurrent callers share one transaction. Before it commits, a
 * group lets the event loop turn (run pending I/O, such as other requests) and takes what arrived,
 * again while items keep arriving or callers that started preparing have not produced theirs, for
 * at most `maxTurns` turns: a lone caller waits one turn. Each caller resumes with its
 * own item's outcome once its group's commit ended. A group whose commit fails is committed again
 * one item at a time, so one item cannot fail the others. An item is committed even if its caller
 * is interrupted while it waits.
 */
export const make = <A, B, E>(
  commit: (items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E>,
  options: { readonly maxGroup: number; readonly maxTurns: number }
): Effect.Effect<GroupCommit<A, B, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    type Entry = readonly [A, Deferred.Deferred<B, E>]
    const maxGroup = Math.max(1, options.maxGroup)
    const waiting = yield* Queue.unbounded<Entry>()
    let preparing = 0
    const settle = (group: ReadonlyArray<Entry>): Effect.Effect<void> =>
      Effect.flatMap(Effect.exit(commit(group.map(([item]) => item))), (exit) =>
        Exit.isSuccess(exit)
          ? Effect.forEach(group, ([, done], i) => Deferred.succeed(done, exit.value[i]!), { discard: true })
          : group.length > 1
          ? Effect.forEach(group, (entry) => settle([entry]), { discard: true })
          : Effect.forEach(group, ([, done]) => Deferred.failCause(done, exit.cause), { discard: true }))
    const gather = (group: ReadonlyArray<Entry>, turns: number): Effect.Effect<ReadonlyArray<Entry>> =>
      turns >= options.maxTurns || group.length >= maxGroup
        ? Effect.succeed(group)
        : Effect.zipRight(
          turn,
          Effect.flatMap(Queue.takeUpTo(waiting, maxGroup - group.length), (more) =>
            more.length === 0 && preparing === 0 ? Effect.succeed(group) : gather([...group, ...more], turns + 1))
        )
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Queue.takeAll(waiting), (left) =>
        Effect.zipRight(
          Effect.forEach(left, ([, done]) =>
            Deferred.interrupt(done), { discard: true }),
          Queue.shutdown(waiting)
        ))
    )
    yield* Queue.takeBetween(waiting, 1, maxGroup).pipe(
      Effect.flatMap((first) =>
        gather([...first], 0)
      ),
      Effect.flatMap((group) => Effect.uninterruptible(settle(group))),
      Effect.forever,
      Effect.forkScoped
    )
    return {
      submit: <X, E2, R>(prepare: Effect.Effect<readonly [A, X], E2, R>) =>
        Effect.suspend(() => {
          const done = Deferred.unsafeMake<B, E>(FiberId.none)
          preparing++
          return Effect.flatMap(
            Effect.onExit(prepare, (exit) => {
              preparing--
              return Exit.isSuccess(exit) ? Queue.offer(waiting, [exit.value[0], done]) : Effect.void
            }),
            ([, extra]) => Effect.map(Deferred.await(done), (outcome) => [outcome, extra] as const)
          )
        })
    }
  })
