/**
 * ISO 6346 container numbers: owner code (3 letters), category (U, J or Z), serial (6 digits),
 * check digit.
 *
 * @module
 */
import { Effect, Random } from "effect"

/** The value of a character code: a digit its value, a letter 10 for A on, skipping multiples of 11. */
const charValue = (code: number): number => {
  if (code < 65) return code - 48
  const n = code - 55
  return n + Math.floor((n - 1) / 10)
}

/** The check digit of the first ten characters, or undefined when they are not of the form `AAAU123456`. */
export const checkDigit = (first10: string): number | undefined => {
  if (!/^[A-Z]{3}[UJZ]\d{6}$/.test(first10)) return undefined
  let sum = 0
  for (let i = 0, weight = 1; i < 10; i++, weight *= 2) sum += charValue(first10.charCodeAt(i)) * weight
  return (sum % 11) % 10
}

/** True for a well-formed container number whose check digit is right. */
export const isValid = (containerNumber: string): boolean => {
  if (!/^[A-Z]{3}[UJZ]\d{7}$/.test(containerNumber)) return false
  let sum = 0
  for (let i = 0, weight = 1; i < 10; i++, weight *= 2) sum += charValue(containerNumber.charCodeAt(i)) * weight
  return (sum % 11) % 10 === containerNumber.charCodeAt(10) - 48
}

/** A random valid container number (category U), drawn from the Effect `Random` service. */
export const generate: Effect.Effect<string> = Effect.gen(function*() {
  let owner = ""
  for (let i = 0; i < 3; i++) owner += String.fromCharCode(65 + (yield* Random.nextIntBetween(0, 26)))
  const serial = String(yield* Random.nextIntBetween(0, 1_000_000)).padStart(6, "0")
  const first10 = `${owner}U${serial}`
  return `${first10}${checkDigit(first10)}`
})
