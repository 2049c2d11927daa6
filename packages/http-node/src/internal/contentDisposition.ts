const unsafe = /[\u0000-\u001f\u007f"\\/:*?<>|%;]/g
const bidi = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

const attrEncode = (s: string): string =>
  encodeURIComponent(s).replace(/['()*!]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase())

/**
 * `Content-Disposition: attachment` for a download named `<name>.json`. The quoted `filename` is
 * ASCII: control characters, quotes, backslashes, path separators and other characters file
 * systems or parsers trip on become `_`, and so does every non-ASCII character. Bidirectional control
 * characters are removed first, so a name cannot display reversed (`invoice\u202efdp.exe`). When that changed
 * anything beyond the unsafe ASCII characters (a non-ASCII name), `filename*` (RFC 6266, UTF-8,
 * RFC 8187 encoding) carries the name with only the unsafe characters replaced.
 */
export const attachment = (name: string, extension = ".json"): string => {
  const safe = (name.replace(bidi, "").replace(unsafe, "_").trim() || "download") + extension
  const ascii = safe.replace(/[^\u0020-\u007e]/g, "_")
  return ascii === safe
    ? `attachment; filename="${ascii}"`
    : `attachment; filename="${ascii}"; filename*=UTF-8''${attrEncode(safe)}`
}
