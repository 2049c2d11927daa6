import { HttpApiBuilder } from "@effect/platform"
import { WidgetSearch } from "@tradeflow/core"
import { Effect } from "effect"
import type { Api, ApiV3 } from "../Api.js"
import { CurrentWidgetCaller } from "../Authentication.js"
import { mapCoreErrors } from "./errors.js"

/** The deprecated widget search of `api`. */
export const widgetGroup = (api: typeof Api | typeof ApiV3) =>
  HttpApiBuilder.group(
    api as typeof Api,
    "widget",
    (handlers) =>
      Effect.map(WidgetSearch.WidgetSearch, (widgets) =>
        handlers.handle("search", ({ urlParams }) =>
          Effect.flatMap(CurrentWidgetCaller, ({ organisation }) =>
            mapCoreErrors(widgets.search(organisation.id, urlParams.query)))))
  )
