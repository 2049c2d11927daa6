import { OpenApi, OpenApiJsonSchema } from "@effect/platform"
import { Api, ApiV3 } from "../Api.js"
import { mediaType, ProblemDocument } from "../Problem.js"

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const

type Schemas = Record<string, OpenApiJsonSchema.JsonSchema>

/**
 * Every 400 as it is answered: a problem document. `HttpApi` documents its own decode error there,
 * which the problem middleware turns into a problem before it reaches the client.
 */
const badRequest = (schemas: Schemas): OpenApi.OpenApiSpecResponse => ({
  description: "The request is malformed (a query parameter, a header, the URL or the body); RFC 9457 problem details",
  content: {
    [mediaType as OpenApi.OpenApiSpecContentType]: {
      schema: OpenApiJsonSchema.makeWithDefs(ProblemDocument, { defs: schemas, topLevelReferenceStrategy: "skip" })
    }
  }
})

/** The schemas some part of `document` (schemas included) refers to, the others dropped. */
const referenced = (document: unknown, schemas: Schemas): Schemas => {
  let kept = schemas
  for (;;) {
    const text = JSON.stringify({ document, kept })
    const next = Object.fromEntries(
      Object.entries(kept).filter(([name]) => text.includes(`"#/components/schemas/${name}"`))
    )
    if (Object.keys(next).length === Object.keys(kept).length) return kept
    kept = next
  }
}

/**
 * The OpenAPI document: the root API plus the `/v3` paths (their operation ids end in `V3`);
 * served under `prefix`, its `servers` name it.
 */
export const openApiDocument = (prefix = ""): OpenApi.OpenAPISpec => {
  const root = OpenApi.fromApi(Api)
  const v3 = OpenApi.fromApi(ApiV3)
  const schemas: Schemas = { ...v3.components.schemas, ...root.components.schemas }
  const problem = badRequest(schemas)
  const paths: Record<string, unknown> = {}
  for (const [items, suffix] of [[root.paths, ""], [v3.paths, "V3"]] as const) {
    for (const [path, item] of Object.entries(items)) {
      const copy: Record<string, unknown> = { ...item }
      for (const method of methods) {
        const operation = item[method]
        if (operation === undefined) continue
        copy[method] = {
          ...operation,
          operationId: `${operation.operationId}${suffix}`,
          responses: {
            ...operation.responses,
            ...(operation.responses[400] === undefined ? {} : { 400: problem })
          }
        }
      }
      paths[path] = copy
    }
  }
  return {
    ...root,
    ...(prefix === "" ? {} : { servers: [{ url: prefix }] }),
    paths: paths as OpenApi.OpenAPISpec["paths"],
    components: { ...root.components, schemas: referenced(paths, schemas) }
  }
}
