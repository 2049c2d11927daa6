import { OpenApi } from "@effect/platform"
import { Api, ApiV3 } from "../Api.js"

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const

/**
 * The OpenAPI document: the root API plus the `/v3` paths (their operation ids end in `V3`);
 * served under `prefix`, its `servers` name it.
 */
export const openApiDocument = (prefix = ""): OpenApi.OpenAPISpec => {
  const root = OpenApi.fromApi(Api)
  const v3 = OpenApi.fromApi(ApiV3)
  const paths: Record<string, unknown> = { ...root.paths }
  for (const [path, item] of Object.entries(v3.paths)) {
    const copy: Record<string, unknown> = { ...item }
    for (const method of methods) {
      const operation = item[method]
      if (operation !== undefined) copy[method] = { ...operation, operationId: `${operation.operationId}V3` }
    }
    paths[path] = copy
  }
  return {
    ...root,
    ...(prefix === "" ? {} : { servers: [{ url: prefix }] }),
    paths: paths as OpenApi.OpenAPISpec["paths"],
    components: {
      ...root.components,
      schemas: { ...v3.components.schemas, ...root.components.schemas }
    }
  }
}
