import type { Location } from "../Location.js"

/** The built-in directory (filled in by the locations work). */
export const builtinPorts: ReadonlyArray<Location> = [
  { unlocode: "NLRTM", name: "Rotterdam", country: { name: "Netherlands", iso_a2: "NL" }, timezone: "Europe/Amsterdam", coordinates: { lat: 51.9225, lng: 4.47917 } },
  { unlocode: "CNSHA", name: "Shanghai", country: { name: "China", iso_a2: "CN" }, timezone: "Asia/Shanghai", coordinates: { lat: 31.2304, lng: 121.4737 } }
]
