/**
 * Preloaded into a server process by the benchmarks (`node --import <this file> …`): it measures the
 * process's event-loop delay with `perf_hooks.monitorEventLoopDelay` (5 ms resolution) and, on
 * SIGUSR2, writes what it saw since the last SIGUSR2 (milliseconds) as JSON to BENCH_ELD_FILE and
 * starts over. Plain JavaScript, so the bundle `npm start` runs can load it without a loader.
 */
import { writeFileSync } from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"

const file = process.env["BENCH_ELD_FILE"]
const histogram = monitorEventLoopDelay({ resolution: 5 })
histogram.enable()
let snapshot = 0
process.on("SIGUSR2", () => {
  const ms = (ns) => Number((ns / 1e6).toFixed(1))
  snapshot++
  if (file !== undefined) {
    writeFileSync(
      file,
      JSON.stringify({
        snapshot,
        samples: histogram.count,
        p50: ms(histogram.percentile(50)),
        p99: ms(histogram.percentile(99)),
        max: ms(histogram.max)
      })
    )
  }
  histogram.reset()
})
