/**
 * The widget search result of a tradeflow (`ApiMessage.WidgetSearchResult`), projected as the
 * upstream messages are (see `RenderMessages` for the rendering choices).
 *
 * @module
 */
import { Effect } from "effect"
import type { Container, WidgetContainer, WidgetLocation, WidgetMove, WidgetSearchResult } from "./ApiMessage.js"
import { carrierOf, container, iso, readingsOf, resolver, vesselOf } from "./internal/projection.js"
import type { Location } from "./Location.js"
import type { Locations } from "./Locations.js"
import { unclassified } from "./StatusCode.js"
import type { StorageError } from "./StorageError.js"
import type { Tradeflow } from "./Tradeflow.js"

const typeGroups: Record<string, string> = {
  G: "GP",
  V: "VH",
  B: "BU",
  S: "SN",
  R: "RE",
  H: "HR",
  U: "UT",
  P: "PF",
  T: "TN",
  A: "AS"
}

/** The widget's type group of a container: the ISO 6346 group code (`GP`, `RE`, `TN`, ...). */
export const typeGroup = (c: Container): string => {
  const iso = /^[0-9A-Z][0-9A-Z]([A-Z])[0-9A-Z]$/.exec(c.container_type)
  return (iso ? typeGroups[iso[1]!] : undefined) ?? (c.container_is_reefer ? "RE" : "GP")
}

/** The widget's location object (country by name). */
export const widgetLocation = (l: Location | null): WidgetLocation =>
  l === null
    ? { name: "", unlocode: "", timezone: "UTC", country: "" }
    : { name: l.name, unlocode: l.unlocode, timezone: l.timezone, country: l.country.name }

const vesselCodes = new Set(["AE", "VD", "VA", "UV"])

/**
 * The widget search result of a tradeflow: departure and arrival from the latest readings of the
 * sea leg (null while a port or every reading is unknown), and for each container its latest
 * actual milestone (vessel only for the vessel milestones AE, VD, VA, UV).
 */
export const widgetSearchResult = (t: Tradeflow): Effect.Effect<WidgetSearchResult, StorageError, Locations> =>
  Effect.gen(function*() {
    const resolve = yield* resolver([t])
    const vessel = vesselOf(t)
    const move = (code: "VD" | "VA", port: string | undefined): WidgetMove | null => {
      if (port === undefined) return null
      const latest = readingsOf(t, code, port).at(-1)
      return latest === undefined ? null : {
        vessel: { name: vessel.name },
        event_date: iso(latest.event_date),
        actual: latest.actual,
        location: widgetLocation(resolve(port))
      }
    }
    const containers: ReadonlyArray<WidgetContainer> = t.containers.map((entry) => {
      const c = container(entry)
      const latest = t.events
        .filter((e) => e.container_reference === entry.reference && e.actual)
        .map((e, i) => [e, i] as const)
        .sort(([a, i], [b, j]) => (a.event_date ?? a.predicted_at) - (b.event_date ?? b.predicted_at) || i - j)
        .at(-1)?.[0]
      return {
        reference: entry.reference,
        details: {
          type_code: c.container_type,
          type_group: typeGroup(c),
          type_reefer: c.container_is_reefer,
          length: c.container_length
        },
        latest_actual_milestone: latest === undefined ? null : {
          vessel: latest.status_code !== null && vesselCodes.has(latest.status_code) ? { name: vessel.name } : null,
          location: widgetLocation(resolve(latest.location)),
          event_date: iso(latest.event_date ?? latest.predicted_at),
          actual: true,
          status_code: latest.status_code ?? unclassified
        }
      }
    })
    return {
      carrier: carrierOf(t).name,
      booking_reference: t.booking_references[0] ?? null,
      bill_of_lading_reference: t.bill_of_lading_references[0] ?? null,
      departure: move("VD", t.details.port_of_loading),
      arrival: move("VA", t.details.port_of_discharge),
      containers
    }
  })
