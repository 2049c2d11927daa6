import { Effect } from "effect"

/** Lets the event loop run pending I/O once (a macrotask turn), off Effect's clock. */
export const turn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * A step to run between units of synchronous work: once `sliceMillis` have passed since the last
 * turn, it lets the event loop {@link turn} (or runs `turnWith`), so that a long job does not hold
 * back I/O sharing the thread (an HTTP server answering its 202s); otherwise it does nothing. One
 * per loop.
 */
export const timeSlice = (sliceMillis = 2, turnWith: Effect.Effect<void> = turn): Effect.Effect<void> => {
  let since = performance.now()
  const turned = Effect.tap(turnWith, () => {
    since = performance.now()
  })
  return Effect.suspend(() => performance.now() - since < sliceMillis ? Effect.void : turned)
}

/** Synchronous work that yields (pauses) between units of it: {@link drive} or {@link complete} runs it. */
export type Steps<A> = Generator<void, A, undefined>

/** Runs a generator of synchronous work (see {@link drive}) to its end at once, without pausing. */
export const complete = <A>(steps: Steps<A>): A => {
  for (;;) {
    const next = steps.next()
    if (next.done === true) return next.value
  }
}

/**
 * Runs a generator of synchronous work that yields between units of it (a {@link Steps})
 * to its end, running `pause` at each yield.
 */
export const drive = <A>(steps: Steps<A>, pause: Effect.Effect<void>): Effect.Effect<A> =>
  Effect.gen(function*() {
    for (;;) {
      const next = steps.next()
      if (next.done === true) return next.value
      yield* pause
    }
  })
