/**
 * The two environments of SERVICE.md: production (`prod_` keys) and UAT (`uat_` keys).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/** @since 0.1.0 */
export const Environment = Schema.Literal("production", "uat")
/** @since 0.1.0 */
export type Environment = typeof Environment.Type
