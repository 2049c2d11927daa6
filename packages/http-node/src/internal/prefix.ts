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
