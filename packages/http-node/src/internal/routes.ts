import { HttpApi } from "@effect/platform"

/** A route of the server: its method and a matcher of its path. */
export interface RouteEntry {
  readonly method: string
  /** The router path, `:param` segments included (e.g. `/v3/upstream`). */
  readonly path: string
  readonly pattern: RegExp
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A matcher for a router path (`:param` segments match one non-empty segment). */
export const pathPattern = (path: string): RegExp =>
  new RegExp(
    "^" + path.split("/").map((segment) => segment.startsWith(":") ? "[^/]+" : escapeRegExp(segment)).join("/") + "/?$"
  )

/** The routes of some APIs plus extra `[method, path]` routes. */
export const routeTable = (
  apis: ReadonlyArray<HttpApi.HttpApi.Any>,
  extra: ReadonlyArray<readonly [string, string]>
): ReadonlyArray<RouteEntry> => {
  const routes: Array<RouteEntry> = []
  for (const api of apis) {
    HttpApi.reflect(api as HttpApi.HttpApi<string, never, never, never>, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        routes.push({ method: endpoint.method, path: endpoint.path, pattern: pathPattern(endpoint.path) })
      }
    })
  }
  for (const [method, path] of extra) routes.push({ method, path, pattern: pathPattern(path) })
  return routes
}

/** The methods a path is served with (empty when the path is unknown). */
export const allowedMethods = (routes: ReadonlyArray<RouteEntry>, path: string): ReadonlyArray<string> => {
  const methods = new Set<string>()
  for (const route of routes) {
    if (route.pattern.test(path)) methods.add(route.method)
  }
  return [...methods].sort()
}

/** The router path of the route serving `method` on `path` (e.g. `/console/organisations/:id`), if any. */
export const routeOf = (routes: ReadonlyArray<RouteEntry>, method: string, path: string): string | undefined =>
  routes.find((route) => route.method === method && route.pattern.test(path))?.path
