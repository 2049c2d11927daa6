/** Markup that is safe to send: built only by {@link html}, whose interpolations are escaped. */
export interface Html {
  readonly _tag: "Html"
  readonly value: string
}

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

/** The text with `& < > " '` written as entities: inert in element content and in quoted attributes. */
export const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => entities[c]!)

const piece = (value: unknown): string =>
  value === null || value === undefined || value === false
    ? ""
    : Array.isArray(value)
    ? value.map(piece).join("")
    : typeof value === "object" && (value as Html)._tag === "Html"
    ? (value as Html).value
    : escape(String(value))

/**
 * Markup from a template: every interpolated value is escaped unless it is {@link Html} itself;
 * arrays are joined, and `null`, `undefined` and `false` render nothing. Attribute values must be
 * quoted in the template.
 */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): Html => {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1]!
  return { _tag: "Html", value: out }
}

/** Markup written by this program (never from input): a constant such as the style sheet. */
export const trusted = (value: string): Html => ({ _tag: "Html", value })
