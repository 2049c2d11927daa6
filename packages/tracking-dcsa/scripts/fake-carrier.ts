/**
 * `npm run fake-carrier`: a fake DCSA carrier to try by hand (`--help` for its options). It
 * prints its base URL, its shipments and a profile for it, publishes our mock journeys on the real
 * clock, and sends the callbacks of 2.2 subscriptions every few seconds. Ctrl-C stops it.
 *
 * @module
 */
import { Effect, Fiber, Schedule } from "effect"
import { parseArgs } from "node:util"
import * as FakeCarrier from "../test-kit/FakeCarrier.js"

const help = `npm run fake-carrier -- [options]

  --port <n>            127.0.0.1 port (default 4010; 0: any free one)
  --auth <kind>         none (default), api-key (header Consumer-Key: fake-key) or oauth2 (client fake-client / fake-secret)
  --pagination <style>  2.2 page header: next-page-cursor (default) or next-page
  --page-size <n>       the most events per page (default 100)
  --step <minutes>      time between two steps of a journey (default 60)
  --quirk <name>        planAlias, bookingWithEquipment, malformed, outOfOrder, badSignature (repeatable)
  --deliver <seconds>   how often subscription callbacks are sent (default 5)
`

const { values } = parseArgs({
  options: {
    port: { type: "string", default: process.env["FAKE_CARRIER_PORT"] ?? "4010" },
    auth: { type: "string", default: "none" },
    pagination: { type: "string", default: "next-page-cursor" },
    "page-size": { type: "string", default: "100" },
    step: { type: "string", default: "60" },
    quirk: { type: "string", multiple: true, default: [] },
    deliver: { type: "string", default: "5" },
    help: { type: "boolean", default: false }
  }
})

const auth: FakeCarrier.FakeAuth = values.auth === "api-key"
  ? { type: "api-key", header: "Consumer-Key", value: "fake-key" }
  : values.auth === "oauth2"
  ? { type: "oauth2", client_id: "fake-client", client_secret: "fake-secret" }
  : { type: "none" }

const day = 86_400_000
const now = Date.now()
const shipments = [
  {
    booking: "FAKE000001",
    bill_of_lading: "FAKEBL0001",
    containers: ["MSKU9070323", "CSQU3054383"],
    scenario: "ocean_basic"
  },
  {
    booking: "FAKE000002",
    containers: ["MAEU1234567"],
    scenario: "ocean_full",
    departure: now + day,
    arrival: now + 20 * day
  },
  { booking: "FAKE000003", containers: ["CMAU0000010"], scenario: "rolled_shipment", mistake: true },
  { booking: "FAKE000004", containers: ["APZU4812090"], scenario: "delayed_eta", departure: now - 2 * day },
  { booking: "FAKE000005", containers: ["ABCU1234560"], scenario: "empty" }
]

const program = Effect.gen(function*() {
  const fake = yield* FakeCarrier.make({
    port: Number(values.port),
    auth,
    pagination: values.pagination === "next-page" ? "next-page" : "next-page-cursor",
    maxPageSize: Number(values["page-size"]),
    release: { stepMillis: Number(values.step) * 60_000 },
    quirks: Object.fromEntries(values.quirk.map((q) => [q, true])),
    shipments
  })
  const profile = {
    id: "fake",
    version: "2.2",
    base_url: fake.url,
    auth: auth.type === "oauth2"
      ? { type: "oauth2", token_url: fake.tokenUrl, client_id: auth.client_id, client_secret: auth.client_secret }
      : auth,
    push: "subscription"
  }
  yield* Effect.sync(() => {
    console.log(`fake DCSA carrier at ${fake.url}`)
    console.log(`  2.2: GET ${fake.url}/v2/events, ${fake.url}/v2/event-subscriptions; 3.0: GET ${fake.url}/events`)
    if (auth.type === "oauth2") console.log(`  OAuth 2.0 token endpoint: ${fake.tokenUrl}`)
    for (const s of shipments) {
      console.log(
        `  ${s.scenario}: booking ${s.booking}${
          s.bill_of_lading === undefined ? "" : `, bill ${s.bill_of_lading}`
        }, containers ${s.containers.join(", ")}`
      )
    }
    console.log(`  a profile (2.2; "version": "3.0" for 3.0): ${JSON.stringify(profile)}`)
  })
  const deliveries = yield* Effect.fork(
    fake.deliver.pipe(Effect.repeat(Schedule.spaced(`${Number(values.deliver)} seconds`)))
  )
  yield* Fiber.join(deliveries)
})

if (values.help) {
  console.log(help)
} else {
  const fiber = Effect.runFork(Effect.scoped(program))
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => Effect.runFork(Fiber.interrupt(fiber)))
  }
}
