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
import * as PgStorage from "../src/PgStorage.js"
import { layerTest, makeTestSchema, type TestSchema } from "./TestDatabase.js"

userContract("postgres", layerTest)

/** One more "process" on the schema: its own pool, its SQL client and its `UserStore`. */
const open = (test: TestSchema) =>
  Effect.map(
    Layer.build(PgStorage.layer({ url: test.baseUrl, schema: test.schema, maxConnections: 2 })),
    (context) => ({ sql: Context.get(context, SqlClient.SqlClient), users: Context.get(context, UserStore.UserStore) })
  )

describe("PgStorage users on PostgreSQL", () => {
  it.live("0016 creates the user tables, their unique keys and indexes", () =>
    Effect.gen(function*() {
      const test = yield* makeTestSchema()
      const { sql } = yield* open(test)
      const applied = yield* sql<{ migration_id: number }>`SELECT migration_id FROM tradeflow_migrations ORDER BY 1`
      expect(applied.map((m) => m.migration_id)).toContain(16)
      const indexes = yield* sql<{ tablename: string; indexdef: string }>`SELECT tablename, indexdef FROM pg_indexes
        WHERE schemaname = ${test.schema}
          AND tablename IN ('users', 'memberships', 'sessions', 'invitations', 'audit_log')
        ORDER BY tablename, indexname`
      expect(indexes.map((i) => [i.tablename, i.indexdef.replace(/^.* USING btree /, "")])).toEqual([
        ["audit_log", "(organisation_id, seq)"],
        ["audit_log", "(seq)"],
        ["invitations", "(organisation_id)"],
        ["invitations", "(id)"],
        ["invitations", "(token_hash)"],
        ["memberships", "(organisation_id)"],
        ["memberships", "(user_id, organisation_id)"],
        ["sessions", "(id)"],
        ["sessions", "(token_hash)"],
        ["sessions", "(user_id)"],
        ["users", "(email_key)"],
        ["users", "(id)"]
      ])
    }).pipe(Effect.scoped), 30_000)

  it.live(
    "three processes: of concurrent acceptances of one invitation exactly one is accepted; one new e-mail is stored once",
    () =>
      Effect.gen(function*() {
        const test = yield* makeTestSchema()
        const instances = yield* Effect.all([open(test), open(test), open(test)], { concurrency: "unbounded" })
        const stores = instances.map((i) => i.users)
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
          expect([...answers].sort()).toEqual(["accepted", "unusable", "unusable"])
          const winner = users[answers.indexOf("accepted")]!
          for (const user of users) {
            expect(yield* stores[2]!.getUser(user.id)).toEqual(user === winner ? Option.some(user) : Option.none())
          }
          expect((yield* stores[1]!.membersOf(org)).map((m) => m.user_id)).toEqual([winner.id])
          expect((yield* stores[2]!.auditOf({ organisationIds: [org], limit: 10 })).length).toBe(1)

          // three invitations accepted at once by one new e-mail: one user, two invitations still pending
          const email = `${freshId("Same")}@example.com`
          const orgs = stores.map(() => freshId("org"))
          const invitations = orgs.map((o) => makeInvitation(o, { email }))
          for (const i of invitations) yield* stores[0]!.insertInvitation(i)
          const people = stores.map(() => makeUser({ email }))
          const outcomes = yield* Effect.all(
            stores.map((store, i) =>
              store.acceptInvitation({
                invitationId: invitations[i]!.id,
                at: invitations[i]!.created_at + 1,
                user: people[i]!,
                memberships: [makeMembership(people[i]!.id, orgs[i]!)],
                audit: [makeAuditEntry(orgs[i]!)]
              })
            ),
            { concurrency: "unbounded" }
          )
          expect([...outcomes].sort()).toEqual(["accepted", "email_taken", "email_taken"])
          const won = outcomes.indexOf("accepted")
          expect(yield* stores[1]!.findUserByEmail(email.toLowerCase())).toEqual(Option.some(people[won]))
          for (const [i, o] of orgs.entries()) {
            expect((yield* stores[2]!.pendingInvitations(o)).length).toBe(i === won ? 0 : 1)
            expect((yield* stores[2]!.membersOf(o)).length).toBe(i === won ? 1 : 0)
          }
        }
      }).pipe(Effect.scoped),
    60_000
  )
})
