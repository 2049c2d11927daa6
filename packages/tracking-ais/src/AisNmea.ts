/**
 * Raw AIS NMEA 0183 text to vessel reports, whatever carries the text: lines split from chunks of
 * any size (CRLF, LF or CR endings), sentences checked ({@link AisSentence}), multi-part messages
 * joined ({@link AisAssembler}) and decoded ({@link AisDecoder}). Lines that are not valid
 * sentences are skipped; nothing a line holds makes the pipeline fail.
 *
 * @module
 */
import type { VesselPositionSource } from "@tradeflow/core"
import { Chunk, Clock, type Duration, Effect, Option, Stream } from "effect"
import * as AisAssembler from "./AisAssembler.js"
import * as AisDecoder from "./AisDecoder.js"
import * as AisSentence from "./AisSentence.js"

/**
 * The longest line kept, in characters. An NMEA sentence has at most 82, a few tag blocks add a
 * hundred or so; longer text without a line ending is discarded up to the next line ending.
 */
export const maxLineLength = 1024

/** Splits text that arrives in chunks into lines, keeping an unfinished line for the next chunk. */
export interface LineSplitter {
  /** The non-empty lines that `text` completes, without their endings. */
  readonly push: (text: string) => Array<string>
  /** The unfinished line, when the text ends without a line ending. */
  readonly flush: () => Array<string>
}

/** A new splitter; lines longer than `maxLength` are dropped whole. */
export const lineSplitter = (maxLength: number = maxLineLength): LineSplitter => {
  let rest = ""
  let overlong = false
  return {
    push: (text) => {
      const lines = (rest + text).split(/\r\n|\n|\r/)
      rest = lines.pop() ?? ""
      if (overlong && lines.length > 0) {
        lines.shift()
        overlong = false
      }
      if (rest.length > maxLength) {
        rest = ""
        overlong = true
      }
      return lines.filter((line) => line.length > 0 && line.length <= maxLength)
    },
    flush: () => {
      const last = rest
      rest = ""
      overlong = false
      return last === "" ? [] : [last]
    }
  }
}

/** The lines of a stream of text chunks (see {@link lineSplitter}); a last line without ending included. */
export const splitLines =
  (maxLength: number = maxLineLength) => <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<string, E, R> =>
    Stream.suspend(() => {
      const splitter = lineSplitter(maxLength)
      return Stream.concat(
        Stream.mapConcat(text, splitter.push),
        Stream.suspend(() => Stream.fromIterable(splitter.flush()))
      )
    })

/** Options of the pipeline. */
export interface Options {
  /** How long the parts of a multi-part message may take to arrive (default 5 s). */
  readonly partTimeout?: Duration.DurationInput | undefined
}

/** Reads the lines of one connection, in order; it keeps the parts of unfinished messages. */
export interface LineReader {
  /** The reports that `lines`, received at `receivedAt` (epoch ms), complete. */
  readonly read: (
    lines: Iterable<string>,
    receivedAt: number
  ) => Array<VesselPositionSource.VesselReport>
}

/** A new reader, with no message in progress. */
export const lineReader = (options?: Options): LineReader => {
  const assembler = AisAssembler.make({ timeout: options?.partTimeout })
  return {
    read: (lines, receivedAt) => {
      const reports: Array<VesselPositionSource.VesselReport> = []
      for (const line of lines) {
        const sentence = AisSentence.parse(line)
        if (Option.isNone(sentence)) continue
        const message = assembler.push(sentence.value, receivedAt)
        if (Option.isSome(message)) reports.push(...AisDecoder.decode(message.value, receivedAt))
      }
      return reports
    }
  }
}

/**
 * The reports of a stream of lines, each chunk of lines dated by the `Clock` when it is read.
 * Each run of the resulting stream starts with no message in progress.
 */
export const reports =
  (options?: Options) =>
  <E, R>(lines: Stream.Stream<string, E, R>): Stream.Stream<VesselPositionSource.VesselReport, E, R> =>
    Stream.suspend(() => {
      const reader = lineReader(options)
      return Stream.mapChunksEffect(
        lines,
        (chunk) => Effect.map(Clock.currentTimeMillis, (now) => Chunk.unsafeFromArray(reader.read(chunk, now)))
      )
    })
