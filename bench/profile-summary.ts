/**
 * Summarises V8 `.cpuprofile` files (from `node --cpu-prof`): self time by package or area and the
 * top functions by self time, and with `--inclusive` the top functions outside Effect's own packages by inclusive time (the
 * share of samples whose stack holds the function), as Markdown. `npx tsx --conditions=@tradeflow/source bench/profile-summary.ts
 * <file.cpuprofile>... [--top N] [--inclusive]`. A bundle's frames are named by their sources through its source map
 * (`dist/server.mjs.map`).
 */
import { existsSync, readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { fileURLToPath } from "node:url"

interface Node {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
    readonly columnNumber: number
  }
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<Node>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const args = process.argv.slice(2)
const topAt = args.indexOf("--top")
const top = topAt === -1 ? 25 : Number(args[topAt + 1])
const files = args.filter((a, i) => a.endsWith(".cpuprofile") && (topAt === -1 || i !== topAt + 1))
const inclusive = args.includes("--inclusive")

const maps = new Map<string, SourceMap | undefined>()

/** The source map next to a bundle (`<file>.map`, as `npm run build` writes it), if any. */
const mapOf = (url: string): SourceMap | undefined => {
  if (!maps.has(url)) {
    const file = url.startsWith("file:") ? `${fileURLToPath(url)}.map` : ""
    maps.set(url, existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, "utf8"))) : undefined)
  }
  return maps.get(url)
}

/** Where a call frame is in the sources: through the bundle's source map when there is one. */
const sourceOf = (frame: Node["callFrame"]): { readonly url: string; readonly lineNumber: number } => {
  const entry = mapOf(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber)
  return entry !== undefined && "originalSource" in entry
    ? { url: entry.originalSource, lineNumber: entry.originalLine }
    : frame
}

/** The package or area a script URL belongs to. */
const areaOf = (url: string, name: string): string => {
  if (url === "") return name.startsWith("(") ? name : "(native)"
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg !== null) return pkg[1]!
  const ours = /\/packages\/([^/]+)\//.exec(url)
  if (ours !== null) return `@tradeflow/${ours[1]}`
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[0]}`
  return url.split("/").slice(-2).join("/")
}

const labelOf = (node: Node): string => {
  const { functionName } = node.callFrame
  const { lineNumber, url } = sourceOf(node.callFrame)
  const name = functionName === "" ? "(anonymous)" : functionName
  return `${name}${url === "" ? "" : ` ${url.replace(/^.*\/(node_modules|packages)\//, "")}:${lineNumber + 1}`}`
}

const self = new Map<string, number>()
const within = new Map<string, number>()
const areas = new Map<string, number>()
let total = 0
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parentOf = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id)
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)
    const delta = profile.timeDeltas[i] ?? 0
    if (node === undefined) return
    const label = labelOf(node)
    self.set(label, (self.get(label) ?? 0) + delta)
    if (inclusive) {
      const seen = new Set<string>()
      for (let n: Node | undefined = node; n !== undefined; n = byId.get(parentOf.get(n.id) ?? -1)) seen.add(labelOf(n))
      for (const l of seen) within.set(l, (within.get(l) ?? 0) + delta)
    }
    const { functionName } = node.callFrame
    const { url } = sourceOf(node.callFrame)
    const area = areaOf(url, functionName === "" ? "(anonymous)" : functionName)
    areas.set(area, (areas.get(area) ?? 0) + delta)
    total += delta
  })
}

const percent = (us: number) => `${(100 * us / total).toFixed(1)} %`
console.log(`${(total / 1e6).toFixed(2)} s of samples in ${files.length} profile(s)\n`)
console.log("| area | self time |\n|---|---:|")
for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  console.log(`| ${area} | ${percent(us)} |`)
}
console.log("\n| function | self time |\n|---|---:|")
for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`| \`${name}\` | ${percent(us)} |`)
}
if (inclusive) {
  console.log("\n| function (outside Effect's own packages) | inclusive time |\n|---|---:|")
  const ours = [...within].filter(([name]) => !/ (effect|@effect)\//.test(name) && !name.startsWith("("))
  for (const [name, us] of ours.sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`| \`${name}\` | ${percent(us)} |`)
  }
}
