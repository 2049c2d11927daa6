import { MetricState, Option } from "effect"
import type * as MetricPair from "effect/MetricPair"

/** The Content-Type of the Prometheus text exposition format 0.0.4. */
export const contentType = "text/plain; version=0.0.4; charset=utf-8"

/** A label value as the text format writes it between quotes: `\`, `"` and newline escaped. */
export const escapeLabelValue = (value: string): string =>
  value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")

const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const metricName = (name: string): string => {
  const safe = name.replace(/[^a-zA-Z0-9_:]/g, "_")
  return /^[0-9]/.test(safe) ? `_${safe}` : safe
}

const labelName = (name: string): string => {
  const safe = name.replace(/[^a-zA-Z0-9_]/g, "_")
  return /^[0-9]/.test(safe) || safe.startsWith("__") ? `_${safe}` : safe
}

const number = (value: number | bigint): string =>
  typeof value === "bigint"
    ? value.toString()
    : Number.isNaN(value)
    ? "NaN"
    : value === Infinity
    ? "+Inf"
    : value === -Infinity
    ? "-Inf"
    : String(value)

const labels = (pairs: ReadonlyArray<readonly [string, string]>): string =>
  pairs.length === 0
    ? ""
    : `{${pairs.map(([key, value]) => `${labelName(key)}="${escapeLabelValue(value)}"`).join(",")}}`

interface Family {
  readonly type: "counter" | "gauge" | "histogram" | "summary"
  readonly help: string
  readonly lines: Array<string>
}

/**
 * The metrics of a registry snapshot (`Metric.snapshot`) in the Prometheus text format 0.0.4:
 * one `# HELP` and `# TYPE` per name, then its samples; histograms as cumulative `_bucket{le}`
 * (the last `+Inf`, equal to `_count`), `_sum` and `_count`; summaries by `quantile`; a frequency
 * as a counter by `key`. Names are sorted, so the output is stable.
 */
export const render = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const families = new Map<string, Family>()
  const family = (name: string, type: Family["type"], help: string): Family => {
    let found = families.get(name)
    if (found === undefined) {
      found = { type, help, lines: [] }
      families.set(name, found)
    }
    return found
  }
  for (const { metricKey, metricState: state } of pairs) {
    const name = metricName(metricKey.name)
    const help = Option.getOrElse(metricKey.description, () => metricKey.name)
    const tags: ReadonlyArray<readonly [string, string]> = metricKey.tags.map((tag) => [tag.key, tag.value])
    if (MetricState.isCounterState(state)) {
      family(name, "counter", help).lines.push(`${name}${labels(tags)} ${number(state.count)}`)
    } else if (MetricState.isGaugeState(state)) {
      family(name, "gauge", help).lines.push(`${name}${labels(tags)} ${number(state.value)}`)
    } else if (MetricState.isHistogramState(state)) {
      const lines = family(name, "histogram", help).lines
      for (const [bound, count] of state.buckets) {
        if (bound === Infinity) continue
        lines.push(`${name}_bucket${labels([...tags, ["le", number(bound)]])} ${number(count)}`)
      }
      lines.push(`${name}_bucket${labels([...tags, ["le", "+Inf"]])} ${number(state.count)}`)
      lines.push(`${name}_sum${labels(tags)} ${number(state.sum)}`)
      lines.push(`${name}_count${labels(tags)} ${number(state.count)}`)
    } else if (MetricState.isSummaryState(state)) {
      const lines = family(name, "summary", help).lines
      for (const [quantile, value] of state.quantiles) {
        lines.push(
          `${name}${labels([...tags, ["quantile", number(quantile)]])} ${number(Option.getOrElse(value, () => NaN))}`
        )
      }
      lines.push(`${name}_sum${labels(tags)} ${number(state.sum)}`)
      lines.push(`${name}_count${labels(tags)} ${number(state.count)}`)
    } else if (MetricState.isFrequencyState(state)) {
      const lines = family(name, "counter", help).lines
      for (const [key, count] of state.occurrences) lines.push(`${name}${labels([...tags, ["key", key]])} ${count}`)
    }
  }
  const out: Array<string> = []
  for (const name of [...families.keys()].sort()) {
    const { help, lines, type } = families.get(name)!
    out.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`, ...lines)
  }
  return out.length === 0 ? "" : out.join("\n") + "\n"
}
