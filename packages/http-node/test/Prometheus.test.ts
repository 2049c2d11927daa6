import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Metric, MetricBoundaries } from "effect"
import { escapeLabelValue, render } from "../src/internal/prometheus.js"
import { assertHistograms, parse, value } from "./Exposition.js"

const unique = (prefix: string) => `${prefix}_${Math.random().toString(36).slice(2)}`

describe("the Prometheus text renderer", () => {
  it.effect("counters, gauges and histograms parse, with HELP and TYPE once per name", () =>
    Effect.gen(function*() {
      const names = {
        counter: unique("test_requests_total"),
        gauge: unique("test_depth"),
        histogram: unique("test_seconds")
      }
      const counter = Metric.counter(names.counter, { description: "Requests\nby path \\ kind" })
      const gauge = Metric.gauge(names.gauge)
      const histogram = Metric.histogram(names.histogram, MetricBoundaries.fromIterable([0.1, 1, 10]), "Time")
      yield* Metric.incrementBy(Metric.tagged(counter, "path", "/a"), 2)
      yield* Metric.increment(Metric.tagged(counter, "path", "/b"))
      yield* Metric.set(gauge, -3.5)
      for (const seconds of [0.05, 0.5, 0.7, 5, 50]) yield* Metric.update(histogram, seconds)
      const exposition = parse(render(yield* Metric.snapshot))
      assert.strictEqual(exposition.types.get(names.counter), "counter")
      assert.strictEqual(exposition.types.get(names.gauge), "gauge")
      assert.strictEqual(exposition.types.get(names.histogram), "histogram")
      assert.strictEqual(value(exposition, names.counter, { path: "/a" }), 2)
      assert.strictEqual(value(exposition, names.counter, { path: "/b" }), 1)
      assert.strictEqual(value(exposition, names.gauge), -3.5)
      const bucket = (le: string) => value(exposition, `${names.histogram}_bucket`, { le })
      assert.deepStrictEqual([bucket("0.1"), bucket("1"), bucket("10"), bucket("+Inf")], [1, 3, 4, 5])
      assert.strictEqual(value(exposition, `${names.histogram}_count`), 5)
      assert.closeTo(value(exposition, `${names.histogram}_sum`), 56.25, 1e-9)
      assertHistograms(exposition)
    }))

  it.prop("any label value round-trips through escaping", [fc.string({ unit: "binary" })], ([label]) => {
    const name = unique("test_roundtrip")
    return Effect.gen(function*() {
      yield* Metric.set(Metric.tagged(Metric.gauge(name), "value", label), 1)
      const exposition = parse(render(yield* Metric.snapshot))
      const samples = exposition.samples.filter((s) => s.name === name)
      assert.strictEqual(samples.length, 1)
      assert.strictEqual(samples[0]!.labels["value"], label)
      assert.notInclude(escapeLabelValue(label), "\n")
    }).pipe(Effect.runSync)
  })
})
