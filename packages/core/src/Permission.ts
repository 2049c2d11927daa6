/**
 * What each role may do in an organisation: the role × action matrix every screen and console
 * route checks.
 *
 * @module
 */
import { Schema } from "effect"
import { type Role, roles } from "./User.js"

/**
 * An action on an organisation: `read` everything of it (overview, keys and automations as
 * listed, deliveries, tradeflows, Download V3); `operate` (Send test, Retry, redeliver, refresh
 * tracking); `configure` (API and widget keys, automations); `manage_members` (invite, change
 * roles, UAT access, deactivate, read the audit log) for roles below owner; `manage_owners` the
 * same for owners.
 */
export const Action = Schema.Literal("read", "operate", "configure", "manage_members", "manage_owners")
export type Action = typeof Action.Type

/** Every action, in the order of the roles that gain them. */
export const actions: ReadonlyArray<Action> = ["read", "operate", "configure", "manage_members", "manage_owners"]

/** The least role that may do each action. */
const leastRole: Record<Action, Role> = {
  read: "viewer",
  operate: "member",
  configure: "admin",
  manage_members: "admin",
  manage_owners: "owner"
}

/** Whether `role` may do `action`: a role may do what every role below it may. */
export const permits = (role: Role, action: Action): boolean => roles.indexOf(role) >= roles.indexOf(leastRole[action])

/** The action that managing a member of `role` takes (`manage_owners` for an owner). */
export const toManage = (role: Role): Action => role === "owner" ? "manage_owners" : "manage_members"
