/**
 * @tradeflow/tracking-ais: live vessel positions for the tradeflow service (Node only). Core's
 * `VesselPositionSource` over a TCP feed of raw AIS NMEA 0183 (`!AIVDM` / `!AIVDO`): sentences
 * checked and joined, message types 1, 2, 3, 5, 18, 19 and 24 decoded (with `aisparser`), a
 * silence watchdog and reconnection with backoff. Each module is exported as a namespace.
 *
 * @module @tradeflow/tracking-ais
 */
export * as AisAssembler from "./AisAssembler.js"
export * as AisDecoder from "./AisDecoder.js"
export * as AisNmea from "./AisNmea.js"
export * as AisNmeaTcp from "./AisNmeaTcp.js"
export * as AisSentence from "./AisSentence.js"
