/**
 * The two environments of SERVICE.md: production (`prod_` keys) and UAT (`uat_` keys).
 *
 * @module
 */
import { Schema } from "effect"

export const Environment = Schema.Literal("production", "uat")
export type Environment = typeof Environment.Type
