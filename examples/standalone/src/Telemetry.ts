/**
 * OpenTelemetry traces of the server, exported over OTLP/HTTP when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; otherwise no
 * tracer is installed at all.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Config, Effect, Layer } from "effect"

const set = (name: string) => Config.string(name).pipe(Config.withDefault(""), Config.map((v) => v.trim() !== ""))

/**
 * The spans of the server (one server span per request, with the `Effect.fn` and SQL spans of
 * the work it did as children) batched to the OTLP/HTTP endpoint of the standard `OTEL_*`
 * variables, which the exporter reads itself (endpoint, protocol, headers, timeout); the service
 * is named by `OTEL_SERVICE_NAME` (default `tradeflow`). Closing the layer (a graceful shutdown)
 * exports the spans still batched.
 */
export const layerConfig: Layer.Layer<never> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const enabled = (yield* set("OTEL_EXPORTER_OTLP_ENDPOINT")) || (yield* set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    if (!enabled) return Layer.empty
    const serviceName = yield* Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("tradeflow"))
    return NodeSdk.layer(() => ({
      resource: { serviceName },
      spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter())
    }))
  }).pipe(Effect.orDie)
)
