import type { HttpServerRequest } from "@effect/platform"
import { Context, Effect } from "effect"

/** A mount prefix: "" or `/a/b` (a trailing slash dropped); anything else is a defect. */
export const normalizePrefix = (prefix: string | undefined): string => {
  const trimmed = (prefix ?? "").replace(/\/+$/, "")
  if (trimmed !== "" && !/^(\/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+$/.test(trimmed)) {
    throw new Error(`a mount prefix is "" or /<segment>[/<segment>…], got ${JSON.stringify(prefix)}`)
  }
  return trimmed
}

/**
 * The part of `url` (a path with its query) under `prefix`, from its `/`; undefined when `url` is
 * not under `prefix` (`/tracking` holds `/tracking`, `/tracking/…` and `/tracking?…`, not
 * `/trackingx`).
 */
export const underPrefix = (prefix: string, url: string): string | undefined => {
  if (!url.startsWith(prefix)) return undefined
  const rest = url.slice(prefix.length)
  return rest === "" ? "/" : rest[0] === "/" ? rest : rest[0] === "?" ? "/" + rest : undefined
}

/**
 * Where the application is mounted ("" at the root): provided to each request by the app that
 * strips it from the URL, so that an answer can name the path its client asked for.
 */
export class MountPrefix extends Context.Reference<MountPrefix>()("@tradeflow/http-node/MountPrefix", {
  defaultValue: () => ""
}) {}

/** The path of `request` as its client sent it (mount prefix included), without the query. */
export const clientPath = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<string> =>
  Effect.map(MountPrefix, (prefix) => prefix + ((request.url.split("?")[0] ?? "/") || "/"))
