/**
 * What a mock tracking scenario is written against: its input, the events it generates and the
 * journey it answers. Every `MockJourney*` module implements one {@link Scenario};
 * `MockJourneys` names them.
 *
 * @module
 */
import type { Effect } from "effect"
import type { Locations } from "./Locations.js"
import type { StorageError } from "./StorageError.js"
import type { MockEvent } from "./Tradeflow.js"
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

/** A generated journey. */
export interface MockJourney {
  /** The containers the events are for: the input's, or the one picked when it had none. */
  readonly containers: ReadonlyArray<string>
  /** Resolved departure and arrival instants (epoch milliseconds). */
  readonly departure: number
  readonly arrival: number
  /**
   * Every event (a `Tradeflow.MockEvent`) in journey order: steps 0, 1, 2, ... with no gap, the events of a step adjacent
   * (its container events in container order, then its vessel moves).
   */
  readonly events: ReadonlyArray<MockEvent>
}

/** What a scenario needs: the organisation's containers (to pick one) and the location directory. */
export type ScenarioContext = TradeflowStore | Locations

/** A scenario generator. Time comes from `Clock`, randomness from `Random`. */
export type Scenario = (input: MockInput) => Effect.Effect<MockJourney, StorageError, ScenarioContext>
