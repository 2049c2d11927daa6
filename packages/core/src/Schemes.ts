/**
 * Integration schemes: named decoders from a scheme's own payload (a CSV upload, a batch of DCSA
 * events, …) to raw tradeflow records. `POST /downstream/scheme/{scheme}` runs the named scheme
 * and hands its records to the same validation, idempotency and queueing as
 * `POST /downstream/tradeflows` (DECISIONS.md §3).
 *
 * Built in: `csv` ({@link CsvScheme}) and `dcsa-tnt` ({@link DcsaTntScheme}). A host application
 * adds its own with {@link layerWith} or {@link add}.
 *
 * @module
 */
import { Context, Effect, Layer } from "effect"
import * as CsvScheme from "./CsvScheme.js"
import * as DcsaTntScheme from "./DcsaTntScheme.js"
import { type Payload, type Scheme, type SchemeError, UnknownScheme } from "./Scheme.js"

export {
  type DecodeOptions,
  maxErrors,
  type Payload,
  type Scheme,
  SchemeError,
  schemeError,
  SchemeErrorReason,
  UnknownScheme
} from "./Scheme.js"

export class Schemes extends Context.Tag("@tradeflow/core/Schemes")<Schemes, {
  /** Runs the scheme `name` over a payload. */
  readonly decode: (
    name: string,
    payload: Payload
  ) => Effect.Effect<ReadonlyArray<unknown>, UnknownScheme | SchemeError>
  /** The registered scheme names, built-ins first. */
  readonly names: ReadonlyArray<string>
}>() {}

/** The built-in schemes by name. */
export const builtins = (): Readonly<Record<string, Scheme>> => ({
  csv: CsvScheme.scheme,
  "dcsa-tnt": DcsaTntScheme.scheme
})

const fromMap = (byName: ReadonlyMap<string, Scheme>): Schemes["Type"] =>
  Schemes.of({
    names: Array.from(byName.keys()),
    decode: Effect.fn("Schemes.decode")(function*(name: string, payload: Payload) {
      const scheme = byName.get(name)
      if (scheme === undefined) return yield* new UnknownScheme({ scheme: name, known: Array.from(byName.keys()) })
      return yield* scheme.decode(payload)
    })
  })

/** A registry of exactly these schemes (names are matched exactly, as they appear in the path). */
export const make = (schemes: Readonly<Record<string, Scheme>>): Schemes["Type"] =>
  fromMap(new Map(Object.entries(schemes)))

/** The built-in schemes. */
export const layer: Layer.Layer<Schemes> = Layer.sync(Schemes, () => make(builtins()))

/**
 * The built-in schemes plus `extra` (an extra scheme of a built-in name replaces it).
 *
 * @example
 * ```ts
 * // Schemes: the namespace of this module as exported by @tradeflow/core
 * // POST /downstream/scheme/po-lines, body: one "PO;container" pair a line
 * const poLines: Schemes.Scheme = {
 *   decode: ({ body }) => {
 *     const text = typeof body === "string" ? body : new TextDecoder().decode(body)
 *     const lines = text.split("\n").filter((l) => l.trim() !== "")
 *     const bad = lines.flatMap((l, i) => l.includes(";") ? [] : [{ path: `/${i}`, message: `line ${i + 1}: no ;` }])
 *     return bad.length > 0
 *       ? Effect.fail(Schemes.schemeError("invalid", bad))
 *       : Effect.succeed(lines.map((l) => {
 *         const [po, container] = l.split(";")
 *         return { tradeflow_reference: po, container_reference: container }
 *       }))
 *   }
 * }
 * const SchemesLive = Schemes.layerWith({ "po-lines": poLines })
 * ```
 */
export const layerWith = (extra: Readonly<Record<string, Scheme>>): Layer.Layer<Schemes> =>
  Layer.sync(Schemes, () => make({ ...builtins(), ...extra }))

/**
 * Adds schemes to the registry below it, so independent parts of a host application can each
 * contribute schemes. A scheme that needs services is built inside a layer:
 *
 * @example
 * ```ts
 * const PartnerX = Layer.unwrapEffect(
 *   Effect.map(PartnerDirectory, (directory) => Schemes.add({ "partner-x": makePartnerX(directory) }))
 * )
 * const SchemesLive = Schemes.add({ edi: ediScheme }).pipe(
 *   Layer.provide(PartnerX),
 *   Layer.provide(Schemes.layer)
 * )
 * ```
 */
export const add = (extra: Readonly<Record<string, Scheme>>): Layer.Layer<Schemes, never, Schemes> =>
  Layer.effect(
    Schemes,
    Effect.map(Schemes, (below) => {
      const own = new Map(Object.entries(extra))
      const names = [...below.names.filter((n) => !own.has(n)), ...own.keys()]
      return Schemes.of({
        names,
        decode: (name, payload) => {
          const scheme = own.get(name)
          return scheme === undefined
            ? Effect.mapError(below.decode(name, payload), (e) =>
              e._tag === "UnknownScheme" ? new UnknownScheme({ scheme: name, known: names }) : e)
            : Effect.withSpan(scheme.decode(payload), "Schemes.decode")
        }
      })
    })
  )
