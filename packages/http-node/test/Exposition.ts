/**
 * A strict reader of the Prometheus text format 0.0.4, for the tests: it throws on any line that
 * is not a `# HELP`, a `# TYPE` or a sample of a family whose `# TYPE` came before it.
 */
import { assert } from "@effect/vitest"

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Exposition {
  readonly types: ReadonlyMap<string, string>
  readonly samples: ReadonlyArray<Sample>
}

const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const labelPair = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"/
const suffixes: Readonly<Record<string, ReadonlyArray<string>>> = {
  counter: [""],
  gauge: [""],
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"]
}

const unescape = (value: string): string => value.replace(/\\(\\|"|n)/g, (_, c: string) => c === "n" ? "\n" : c)

const number = (text: string): number => {
  if (text === "+Inf") return Infinity
  if (text === "-Inf") return -Infinity
  if (text === "NaN") return NaN
  if (!/^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/.test(text)) throw new Error(`not a number: ${text}`)
  return Number(text)
}

/** Reads an exposition; throws on anything malformed. */
export const parse = (text: string): Exposition => {
  if (text !== "" && !text.endsWith("\n")) throw new Error("the exposition does not end with a newline")
  const types = new Map<string, string>()
  const helped = new Set<string>()
  const samples: Array<Sample> = []
  for (const line of text.split("\n").slice(0, -1)) {
    if (line.startsWith("# HELP ")) {
      const [family] = line.slice(7).split(" ", 1)
      if (family === undefined || !name.test(family) || helped.has(family)) throw new Error(`bad HELP: ${line}`)
      helped.add(family)
      continue
    }
    if (line.startsWith("# TYPE ")) {
      const [family, type, ...rest] = line.slice(7).split(" ")
      if (
        family === undefined || !name.test(family) || types.has(family) || rest.length > 0 ||
        type === undefined || !(type in suffixes)
      ) throw new Error(`bad TYPE: ${line}`)
      types.set(family, type)
      continue
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/s.exec(line)
    if (match === null) throw new Error(`bad line: ${JSON.stringify(line)}`)
    const [, sampleName, labelText, valueText] = match as unknown as [string, string, string | undefined, string]
    const labels: Record<string, string> = {}
    if (labelText !== undefined) {
      let rest = labelText.slice(1, -1)
      while (rest.length > 0) {
        const pair = labelPair.exec(rest)
        if (pair === null) throw new Error(`bad labels: ${line}`)
        if (pair[1]! in labels) throw new Error(`repeated label: ${line}`)
        labels[pair[1]!] = unescape(pair[2]!)
        rest = rest.slice(pair[0].length)
        if (rest.startsWith(",")) rest = rest.slice(1)
        else if (rest.length > 0) throw new Error(`bad labels: ${line}`)
      }
    }
    const family = [...types.keys()].find((f) =>
      (suffixes[types.get(f)!] ?? []).some((suffix) => sampleName === f + suffix)
    )
    if (family === undefined) throw new Error(`a sample before its TYPE: ${line}`)
    samples.push({ name: sampleName, labels, value: number(valueText) })
  }
  return { types, samples }
}

const matches = (sample: Sample, name: string, labels: Readonly<Record<string, string>>) =>
  sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v)

/** The value of the one sample of `name` with these labels (others ignored); 0 when there is none. */
export const value = (exposition: Exposition, name: string, labels: Readonly<Record<string, string>> = {}): number => {
  const found = exposition.samples.filter((s) => matches(s, name, labels))
  assert.isAtMost(found.length, 1, `${name} ${JSON.stringify(labels)} matches several samples`)
  return found[0]?.value ?? 0
}

/**
 * Checks every histogram: per series, buckets by ascending `le` with non-decreasing counts, the
 * last `+Inf` and equal to `_count`.
 */
export const assertHistograms = (exposition: Exposition): void => {
  for (const [family, type] of exposition.types) {
    if (type !== "histogram") continue
    const series = new Map<string, Array<Sample>>()
    for (const sample of exposition.samples) {
      if (sample.name !== `${family}_bucket`) continue
      const { le: _le, ...rest } = sample.labels
      const key = JSON.stringify(Object.entries(rest).sort())
      series.set(key, [...series.get(key) ?? [], sample])
    }
    for (const [key, buckets] of series) {
      const labels = Object.fromEntries(JSON.parse(key) as Array<[string, string]>)
      const bounds = buckets.map((b) => number(b.labels["le"] ?? "x"))
      for (let i = 1; i < buckets.length; i++) {
        assert.isTrue(bounds[i]! > bounds[i - 1]!, `${family}: le ascending`)
        assert.isAtLeast(buckets[i]!.value, buckets[i - 1]!.value, `${family}: cumulative`)
      }
      assert.strictEqual(bounds.at(-1), Infinity, `${family}: the last bucket is +Inf`)
      assert.strictEqual(buckets.at(-1)!.value, value(exposition, `${family}_count`, labels), `${family}: +Inf = count`)
    }
  }
}
