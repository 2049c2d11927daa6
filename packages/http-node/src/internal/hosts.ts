import type { Environment } from "@tradeflow/core"
import { Option } from "effect"
import type { HttpSettings } from "../HttpConfig.js"

/** Lower-cases a host, drops its port and the brackets of an IPv6 literal. */
export const normaliseHost = (raw: string): string => {
  const host = raw.trim().toLowerCase()
  if (host.startsWith("[")) {
    const end = host.indexOf("]")
    return end === -1 ? host : host.slice(1, end)
  }
  const colons = host.split(":").length - 1
  if (colons === 1) return host.slice(0, host.indexOf(":"))
  return host.endsWith(".") ? host.slice(0, -1) : host
}

/** The host a request was addressed to (`X-Forwarded-Host` when the proxy is trusted). */
export const requestHost = (
  settings: HttpSettings,
  headers: Readonly<Record<string, string | undefined>>
): string | undefined => {
  const forwarded = settings.trustProxy ? headers["x-forwarded-host"]?.split(",")[0]?.trim() : undefined
  return forwarded !== undefined && forwarded !== "" ? forwarded : headers["host"]
}

/** The environment of a host, if it is in either list. */
export const hostEnvironment = (
  settings: HttpSettings,
  host: string | undefined
): Option.Option<Environment.Environment> => {
  if (host === undefined) return Option.none()
  const name = normaliseHost(host)
  if (name === "") return Option.none()
  if (settings.productionHosts.some((h) => normaliseHost(h) === name)) return Option.some("production")
  if (settings.uatHosts.some((h) => normaliseHost(h) === name)) return Option.some("uat")
  return Option.none()
}

/**
 * The address of the client: the last `X-Forwarded-For` entry (the one the trusted proxy added)
 * when the proxy is trusted, else the socket's remote address.
 */
export const clientAddress = (
  settings: HttpSettings,
  headers: Readonly<Record<string, string | undefined>>,
  remoteAddress: Option.Option<string>
): string => {
  const forwarded = settings.trustProxy ? headers["x-forwarded-for"]?.split(",").at(-1)?.trim() : undefined
  return forwarded !== undefined && forwarded !== "" ? forwarded : Option.getOrElse(remoteAddress, () => "unknown")
}

/** Whether the console is served on a host: on every host when no console host is configured. */
export const consoleHost = (settings: HttpSettings, host: string | undefined): boolean =>
  settings.consoleHosts.length === 0 ||
  (host !== undefined && settings.consoleHosts.some((h) => normaliseHost(h) === normaliseHost(host)))

/** Whether `GET /metrics` is served on a host: only on the configured metrics hosts (none by default). */
export const metricsHost = (settings: HttpSettings, host: string | undefined): boolean =>
  host !== undefined && settings.metricsHosts.some((h) => normaliseHost(h) === normaliseHost(host))
