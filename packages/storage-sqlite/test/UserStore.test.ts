import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { UserStore } from "@tradeflow/core"
import {
  freshId,
  makeAuditEntry,
  makeInvitation,
  makeMembership,
  makeUser,
  userContract
} from "@tradeflow/core/test-kit"
import { Context, Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { SqliteStorage } from "../src/index.js"

const root = mkdtempSync(join(tmpdir(), "tradeflow-sqlite-users-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

userContract("sqlite", SqliteStorage.layer({ filename: join(root, "contract", "storage.sqlite") }))

describe("SqliteStorage users", () => {
  it.effect("0018 creates the user tables, their unique keys and indexes", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return {
          migrations: yield* sql<{ readonly migration_id: number }>`SELECT migration_id FROM tradeflow_migrations`,
          indexes: yield* sql<{ readonly tbl_name: string; readonly name: string }>`SELECT tbl_name, name
            FROM sqlite_master WHERE type = 'index'
              AND tbl_name IN ('users', 'memberships', 'sessions', 'invitations', 'audit_log')
            ORDER BY tbl_name, name`
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename: join(root, "schema", "db.sqlite") })))
      expect(seen.migrations).toContainEqual({ migration_id: 18 })
      expect(seen.indexes).toEqual([
        { tbl_name: "audit_log", name: "audit_log_organisation" },
        { tbl_name: "invitations", name: "invitations_organisation" },
        { tbl_name: "invitations", name: "sqlite_autoindex_invitations_1" },
        { tbl_name: "invitations", name: "sqlite_autoindex_invitations_2" },
        { tbl_name: "memberships", name: "memberships_organisation" },
        { tbl_name: "memberships", name: "sqlite_autoindex_memberships_1" },
        { tbl_name: "sessions", name: "sessions_user" },
        { tbl_name: "sessions", name: "sqlite_autoindex_sessions_1" },
        { tbl_name: "sessions", name: "sqlite_autoindex_sessions_2" },
        { tbl_name: "users", name: "sqlite_autoindex_users_1" },
        { tbl_name: "users", name: "sqlite_autoindex_users_2" }
      ])
    }))

  it.effect("two connections to one file: of concurrent acceptances of one invitation exactly one is accepted", () =>
    Effect.gen(function*() {
      const filename = join(root, "shared", "db.sqlite")
      const [a, b] = yield* Effect.all(
        [Layer.build(SqliteStorage.layer({ filename })), Layer.build(SqliteStorage.layer({ filename }))],
        { concurrency: 1 }
      )
      const stores = [a, b].map((context) => Context.get(context, UserStore.UserStore))
      for (let round = 0; round < 10; round++) {
        const org = freshId("org")
        const invitation = makeInvitation(org)
        yield* stores[0]!.insertInvitation(invitation)
        const users = stores.map(() => makeUser())
        const answers = yield* Effect.all(
          stores.map((store, i) =>
            store.acceptInvitation({
              invitationId: invitation.id,
              at: invitation.created_at + 1,
              user: users[i]!,
              memberships: [makeMembership(users[i]!.id, org)],
              audit: [makeAuditEntry(org)]
            })
          ),
          { concurrency: "unbounded" }
        )
        expect([...answers].sort()).toEqual(["accepted", "unusable"])
        const winner = users[answers.indexOf("accepted")]!
        const loser = users[answers.indexOf("unusable")]!
        expect(yield* stores[1]!.getUser(loser.id)).toEqual(Option.none())
        expect(yield* stores[0]!.getUser(winner.id)).toEqual(Option.some(winner))
        expect((yield* stores[0]!.membersOf(org)).map((m) => m.user_id)).toEqual([winner.id])
        expect((yield* stores[1]!.auditOf({ organisationIds: [org], limit: 10 })).length).toBe(1)
      }
    }).pipe(Effect.scoped))
})
