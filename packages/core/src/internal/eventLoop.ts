import { Effect } from "effect"

/** Lets the event loop run pending I/O once (a macrotask turn), off Effect's clock. */
export const turn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * A step to run between units of synchronous work: once `sliceMillis` have passed since the last
 * turn, it lets the event loop {@link turn}, so that a long job does not hold back I/O sharing the
 * thread (an HTTP server answering its 202s); otherwise it does nothing. One per loop.
 */
export const timeSlice = (sliceMillis = 2): Effect.Effect<void> => {
  let since = performance.now()
  const turned = Effect.tap(turn, () => {
    since = performance.now()
  })
  return Effect.suspend(() => performance.now() - since < sliceMillis ? Effect.void : turned)
}
