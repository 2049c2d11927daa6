import type { Vessel } from "../ApiMessage.js"

/** 32-bit FNV-1a of a string. */
export const fnv1a = (text: string, seed = 0x811c9dc5): number => {
  let h = seed >>> 0
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h >>> 0
}

/** A 7-digit IMO number (6 digits and their check digit) derived from a seed. */
export const imoNumber = (seed: number): string => {
  const six = String(100_000 + (seed % 900_000))
  let sum = 0
  for (let i = 0; i < 6; i++) sum += Number(six[i]) * (7 - i)
  return `${six}${sum % 10}`
}

/** A 9-digit MMSI number (maritime identification digits 200..799) derived from a seed. */
export const mmsiNumber = (seed: number): string =>
  `${200 + (seed % 600)}${String(Math.floor(seed / 600) % 1_000_000).padStart(6, "0")}`

/** A vessel of that name with IMO and MMSI numbers derived deterministically from the name. */
export const vesselNamed = (name: string): Vessel => ({
  name,
  imo_number: imoNumber(fnv1a(name.toUpperCase())),
  mmsi_number: mmsiNumber(fnv1a(name.toUpperCase(), 0x1234567))
})
