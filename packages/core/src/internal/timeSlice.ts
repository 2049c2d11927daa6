import { Effect } from "effect"

/**
 * A step to run between units of synchronous work: once `sliceMillis` have passed since the last
 * yield, it yields to the host's event loop with a timer, so that a long job does not hold back I/O
 * sharing the thread (an HTTP server answering its 202s); otherwise it does nothing. One per loop.
 */
export const timeSlice = (sliceMillis = 4): Effect.Effect<void> => {
  let since = performance.now()
  const yielded = Effect.async<void>((resume) => {
    const timer = setTimeout(() => {
      since = performance.now()
      resume(Effect.void)
    }, 0)
    return Effect.sync(() => clearTimeout(timer))
  })
  return Effect.suspend(() => performance.now() - since < sliceMillis ? Effect.void : yielded)
}
