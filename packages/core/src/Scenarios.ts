/**
 * The mock tracking scenarios of the UAT sandbox: a registry from scenario name to generator.
 *
 * @since 0.1.0
 */
import { type Effect, Option } from "effect"
import * as OceanBasic from "./OceanBasic.js"
import type { StatusCode } from "./StatusCode.js"
import type { StorageError } from "./StorageError.js"
import type { TradeflowStore } from "./TradeflowStore.js"

/** What a scenario is generated from: the merged tradeflow, with the dates as they were sent. */
export interface MockInput {
  readonly organisation_id: string
  readonly reference: string
  /** The tradeflow's container numbers (may be empty). */
  readonly containers: ReadonlyArray<string>
  readonly port_of_loading?: string | undefined
  readonly port_of_discharge?: string | undefined
  readonly estimated_time_of_departure?: string | undefined
  readonly actual_time_of_departure?: string | undefined
  readonly estimated_time_of_arrival?: string | undefined
  readonly actual_time_of_arrival?: string | undefined
}

/**
 * A generated event. `container_reference` null is a vessel move of the shipment (the departure
 * at the port of loading, the arrival at the port of discharge), which renders as a SHIPMENT_CHANGE.
 */
export interface MockEvent {
  readonly status_code: StatusCode
  readonly message: string
  readonly container_reference: string | null
  /** UN/LOCODE. */
  readonly location: string
  /** Epoch milliseconds. */
  readonly event_date: number
  readonly actual: boolean
}

/** A generated journey. */
export interface MockJourney {
  /** The containers the events are for: the input's, or the one picked when it had none. */
  readonly containers: ReadonlyArray<string>
  /** Resolved departure and arrival instants (epoch milliseconds). */
  readonly departure: number
  readonly arrival: number
  /** Container events per container in the order of the scenario table, then the vessel moves. */
  readonly events: ReadonlyArray<MockEvent>
}

/** A scenario generator. Time comes from `Clock`, randomness from `Random`. */
export type Scenario = (input: MockInput) => Effect.Effect<MockJourney, StorageError, TradeflowStore>

/** Every scenario by name. */
export const scenarios: ReadonlyMap<string, Scenario> = new Map<string, Scenario>([
  ["ocean_basic", OceanBasic.generate]
])

/** Names of the scenarios the sandbox generates; any other name is ignored with a warning. */
export const scenarioNames: ReadonlyArray<string> = [...scenarios.keys()]

/** The scenario of that name, if there is one. */
export const lookup = (name: string): Option.Option<Scenario> => Option.fromNullable(scenarios.get(name))
