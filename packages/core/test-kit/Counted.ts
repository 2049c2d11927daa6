import { Effect, Metric, MetricState } from "effect"

/**
 * The count of the counter `name` in Effect's metric registry, summed over its series carrying
 * these labels. The registry is per process: tests compare deltas.
 */
export const counted = (name: string, labels: Readonly<Record<string, string>>): Effect.Effect<number> =>
  Effect.map(Metric.snapshot, (pairs) =>
    pairs.reduce(
      (sum, { metricKey, metricState }) =>
        metricKey.name === name && MetricState.isCounterState(metricState) &&
          Object.entries(labels).every(([k, v]) => metricKey.tags.some((t) => t.key === k && t.value === v))
          ? sum + Number(metricState.count)
          : sum,
      0
    ))
