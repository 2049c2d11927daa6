/** The shape of an ISO 8601 date-time `IsoDateTime` accepts (a date alone, or with a time and an optional offset). */
export const isoDateTimePattern =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/
