/**
 * The standardised milestone status codes of SERVICE.md, and the mapping of free-text event
 * names (DCSA event names and the usual English phrases) onto them.
 *
 * @module
 */
import { Schema } from "effect"

/** The eight milestone codes of SERVICE.md. */
export const StatusCode = Schema.Literal("GE", "GN", "AE", "VD", "VA", "UV", "GT", "GR")
export type StatusCode = typeof StatusCode.Type

/**
 * The code rendered for an event whose message maps onto none of the eight codes ("unclassified").
 * Such events still produce a CONTAINER_MILESTONE (with the message as sent) and a BASIC_STATUS.
 */
export const unclassified = "ZZ"

/** The English name of each code, used as the message of mock events. */
export const descriptions: Readonly<Record<StatusCode, string>> = {
  GE: "Gate out empty",
  GN: "Gate in full",
  AE: "Loaded on vessel",
  VD: "Vessel departure",
  VA: "Vessel arrival",
  UV: "Unloaded from vessel",
  GT: "Gate out full",
  GR: "Empty equipment returned"
}

const synonyms: Readonly<Record<StatusCode, ReadonlyArray<string>>> = {
  GE: [
    "gate out empty",
    "empty gate out",
    "empty equipment dispatched",
    "empty dispatched",
    "empty container dispatched",
    "empty to shipper",
    "empty pickup",
    "empty pick up",
    "pick up empty",
    "pickup empty",
    "pick",
    "empty release"
  ],
  GN: [
    "gate in full",
    "full gate in",
    "gate in",
    "gtin",
    "received for export",
    "gate in full for export",
    "export received"
  ],
  AE: ["loaded on vessel", "load", "loaded", "loaded on board", "load on vessel", "vessel loaded", "loaded onboard"],
  VD: [
    "vessel departure",
    "depa",
    "departure",
    "vessel departed",
    "departed",
    "actual departure",
    "estimated departure"
  ],
  VA: ["vessel arrival", "arri", "arrival", "vessel arrived", "arrived", "actual arrival", "estimated arrival"],
  UV: [
    "unloaded from vessel",
    "disc",
    "discharge",
    "discharged",
    "discharged from vessel",
    "unloaded",
    "vessel unloaded"
  ],
  GT: [
    "gate out full",
    "full gate out",
    "gate out",
    "gtot",
    "gate out for delivery",
    "out for delivery",
    "import gate out"
  ],
  GR: [
    "empty equipment returned",
    "empty returned",
    "empty return",
    "empty container returned",
    "returned empty",
    "gate in empty",
    "empty gate in",
    "drop",
    "empty drop off"
  ]
}

const normalise = (message: string): string => message.toLowerCase().replace(/[^a-z0-9]+/g, " ").trim()

const table: ReadonlyMap<string, StatusCode> = new Map(
  (Object.keys(synonyms) as Array<StatusCode>).flatMap((code) => [
    [code.toLowerCase(), code] as const,
    ...synonyms[code].map((s) => [normalise(s), code] as const)
  ])
)

/**
 * The status code of an event name: case, underscores, hyphens and punctuation are ignored
 * (`"GATE_OUT_EMPTY"`, `"Gate out empty"` and `"GE"` are all `GE`; DCSA `LOAD`, `DEPA`, `ARRI`,
 * `DISC`, `GTIN`, `GTOT` map to AE, VD, VA, UV, GN, GT). Undefined when nothing matches.
 */
export const fromMessage = (message: string): StatusCode | undefined => table.get(normalise(message))
