/**
 * The part of `aisparser` (plain JavaScript, without types) that this package calls; what it
 * returns is described in ./payload.ts.
 */
declare module "aisparser" {
  class AisParser {
    constructor(options?: { readonly checksum?: boolean })
    parseArray(fields: Array<string>): unknown
  }

  export = AisParser
}
