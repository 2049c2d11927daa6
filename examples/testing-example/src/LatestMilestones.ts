/**
 * A tiny consumer of upstream APIMessages: the latest actual milestone of every container.
 */
import type { ApiMessage } from "@tradeflow/core"

/** What the consumer keeps of a milestone. */
export interface Milestone {
  readonly tradeflow_reference: string
  readonly container: string
  readonly status_code: string
  readonly event_date: string
}

/** The latest actual milestone per container number. */
export type LatestMilestones = ReadonlyMap<string, Milestone>

/** Nothing seen yet. */
export const empty: LatestMilestones = new Map()

/**
 * Folds one message in: an actual CONTAINER_MILESTONE replaces the container's milestone unless
 * the kept one is later (by `event_date`; a tie goes to the newer message). Other messages and
 * predictions leave the state as it is.
 */
export const update = (state: LatestMilestones, message: ApiMessage.ApiMessage): LatestMilestones => {
  if (message.type !== "CONTAINER_MILESTONE" || !message.payload.actual) return state
  const p = message.payload
  const kept = state.get(p.transport_unit_reference)
  if (kept !== undefined && Date.parse(kept.event_date) > Date.parse(p.event_date)) return state
  return new Map(state).set(p.transport_unit_reference, {
    tradeflow_reference: message.tradeflow_reference,
    container: p.transport_unit_reference,
    status_code: p.status_code,
    event_date: p.event_date
  })
}

/** The latest milestones of messages in the order they were received. */
export const latestMilestones = (messages: ReadonlyArray<ApiMessage.ApiMessage>): LatestMilestones =>
  messages.reduce(update, empty)
