import { Effect, Metric } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"

const residentMemory = Metric.gauge("process_resident_memory_bytes", {
  description: "Resident memory size of the process"
})
const heapUsed = Metric.gauge("nodejs_heap_size_used_bytes", { description: "V8 heap in use" })
const heapTotal = Metric.gauge("nodejs_heap_size_total_bytes", { description: "V8 heap allocated" })
const delayOf = {
  p50: Metric.gauge("nodejs_eventloop_lag_p50_seconds", {
    description: "Median event-loop delay since the previous scrape"
  }),
  p99: Metric.gauge("nodejs_eventloop_lag_p99_seconds", {
    description: "99th percentile of the event-loop delay since the previous scrape"
  }),
  max: Metric.gauge("nodejs_eventloop_lag_max_seconds", {
    description: "Longest event-loop delay since the previous scrape"
  })
}

/**
 * A sampler of the process's memory and event-loop delay (`perf_hooks.monitorEventLoopDelay`, at a
 * 10 ms resolution, reset at each sample), the monitor running for the lifetime of the scope.
 */
export const makeProcessSampler = Effect.gen(function*() {
  const monitor = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const histogram = monitorEventLoopDelay({ resolution: 10 })
      histogram.enable()
      return histogram
    }),
    (histogram) => Effect.sync(() => histogram.disable())
  )
  return Effect.suspend(() => {
    const memory = process.memoryUsage()
    const seconds = (nanos: number) => Number.isFinite(nanos) ? nanos / 1e9 : 0
    const sampled = [
      Metric.set(residentMemory, memory.rss),
      Metric.set(heapUsed, memory.heapUsed),
      Metric.set(heapTotal, memory.heapTotal),
      Metric.set(delayOf.p50, seconds(monitor.percentile(50))),
      Metric.set(delayOf.p99, seconds(monitor.percentile(99))),
      Metric.set(delayOf.max, seconds(monitor.max))
    ]
    monitor.reset()
    return Effect.all(sampled, { discard: true })
  })
})
