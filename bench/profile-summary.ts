/**
 * Summarises V8 `.cpuprofile` files (from `node --cpu-prof`): self time by package or area and the
 * top functions by self time, as Markdown. `npx tsx --conditions=@tradeflow/source bench/profile-summary.ts <file.cpuprofile>... [--top N]`.
 */
import { readFileSync } from "node:fs"

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
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
const files = args.filter((a, i) => a.endsWith(".cpuprofile") && i !== topAt + 1)

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

const self = new Map<string, number>()
const areas = new Map<string, number>()
let total = 0
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)
    const delta = profile.timeDeltas[i] ?? 0
    if (node === undefined) return
    const { functionName, lineNumber, url } = node.callFrame
    const name = functionName === "" ? "(anonymous)" : functionName
    const where = url === "" ? "" : ` ${url.replace(/^.*\/(node_modules|packages)\//, "")}:${lineNumber + 1}`
    self.set(`${name}${where}`, (self.get(`${name}${where}`) ?? 0) + delta)
    const area = areaOf(url, name)
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
