/**
 * The harness of the browser tests: Debian's Chromium driven by playwright-core, contexts whose
 * requests must stay on loopback, axe-core's accessibility checks, screenshots, and keyboard-only
 * navigation. Where Chromium is missing the browser tests do not run, and say so; under
 * `CI=true` its absence fails.
 */
import axe from "axe-core"
import { accessSync, constants, mkdirSync } from "node:fs"
import { join } from "node:path"
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type JSHandle,
  type Locator,
  type Page
} from "playwright-core"
import { describe, expect, it } from "vitest"

/** The Chromium the tests drive: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`. */
export const chromiumPath: string = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

/** Whether {@link chromiumPath} is an executable file. */
export const chromiumPresent: boolean = (() => {
  try {
    accessSync(chromiumPath, constants.X_OK)
    return true
  } catch {
    return false
  }
})()

/** The repository's root folder. */
const root = join(import.meta.dirname, "..", "..", "..", "..")

/** Where {@link screenshot} writes. */
export const screenshotsDir: string = join(root, "test-artifacts", "screenshots")

/**
 * Whether the browser tests of `describeName` can run. Where Chromium is missing it registers a
 * failing test saying so: vitest.config.ts leaves the browser tests out in that case (with a
 * warning), so this runs only under `CI=true`, where their absence must fail. A test file wraps
 * its `describe` in `if (requireBrowser(name))`.
 */
export const requireBrowser = (describeName: string): boolean => {
  if (chromiumPresent) return true
  describe(`${describeName} (Chromium)`, () => {
    it("has Chromium", () => {
      expect.fail(
        `browser tests "${describeName}" did not run: Chromium is missing at ${chromiumPath}; ` +
          "vitest.config.ts leaves them out then, but under CI=true they must run"
      )
    })
  })
  return false
}

/** The flags Chromium runs with: no sandbox (containers), no GPU, and none of its own traffic. */
export const chromiumArgs: ReadonlyArray<string> = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-extensions"
]

/** Launches headless Chromium at {@link chromiumPath}; the caller closes it. */
export const launch = (): Promise<Browser> =>
  chromium.launch({ executablePath: chromiumPath, headless: true, args: [...chromiumArgs] })

/** A browser context whose requests are confined to loopback. */
export interface LoopbackContext {
  readonly context: BrowserContext
  /** The URLs the pages asked for off loopback, in order; each was refused. */
  readonly outside: () => ReadonlyArray<string>
}

/** Whether a URL stays on this machine: a loopback host, or a `data:`, `blob:` or `about:` URL. */
export const isLoopback = (url: string): boolean => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return false
  }
  if (parsed.protocol === "data:" || parsed.protocol === "blob:" || parsed.protocol === "about:") return true
  const host = parsed.hostname.toLowerCase()
  return host === "127.0.0.1" || host === "localhost" || host.endsWith(".localhost") || host === "[::1]"
}

/**
 * A new context of `browser` (downloads accepted, service workers blocked so that every request
 * goes through the context's routes, and `options` on top) in which every request and WebSocket to
 * a host off loopback is refused and recorded in `outside()`.
 */
export const openContext = async (
  browser: Browser,
  options: BrowserContextOptions = {}
): Promise<LoopbackContext> => {
  const context = await browser.newContext({ acceptDownloads: true, serviceWorkers: "block", ...options })
  const refused: Array<string> = []
  await context.route("**/*", (route) => {
    const url = route.request().url()
    if (isLoopback(url)) return route.continue()
    refused.push(url)
    return route.abort("blockedbyclient")
  })
  await context.routeWebSocket(/.*/, (ws) => {
    if (isLoopback(ws.url())) {
      ws.connectToServer()
    } else {
      refused.push(ws.url())
      void ws.close({ code: 1008, reason: "off loopback" })
    }
  })
  return { context, outside: () => [...refused] }
}

/** An axe-core violation, compactly: its rule, impact, help text, and the selectors of the offending elements. */
export interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<string>
}

/**
 * The accessibility violations axe-core finds in the page's document, with axe's default rules
 * (WCAG 2.0–2.2 A and AA, and best practices) unless `options` say otherwise. axe is injected
 * through the DevTools protocol, so the page's Content-Security-Policy does not stop it.
 */
export const axeViolations = async (
  page: Page,
  options: axe.RunOptions = {}
): Promise<ReadonlyArray<AxeViolation>> => {
  await page.evaluate(`${axe.source}\n;0`)
  return page.evaluate(async (runOptions) => {
    const g = globalThis as any
    const results = await g.axe.run(g.document, { ...runOptions, resultTypes: ["violations"] })
    return results.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      nodes: v.nodes.map((n: any) =>
        n.target.map((t: string | Array<string>) => (Array.isArray(t) ? t.join(" >>> ") : t)).join(" | ")
      )
    }))
  }, options as unknown as Record<string, unknown>)
}

/** Writes a full-page PNG of `page` to `test-artifacts/screenshots/<name>.png` at the repository's root; its path. */
export const screenshot = async (page: Page, name: string): Promise<string> => {
  mkdirSync(screenshotsDir, { recursive: true })
  const path = join(screenshotsDir, `${name.replace(/[^A-Za-z0-9._-]+/g, "-")}.png`)
  await page.screenshot({ path, fullPage: true, animations: "disabled" })
  return path
}

/**
 * The DOM element a predicate of {@link tabUntil} receives in the page: the members the
 * predicates use (the tests' TypeScript has no DOM library).
 */
export interface PageElement {
  readonly tagName: string
  readonly id: string
  readonly textContent: string | null
  readonly value?: string
  readonly labels?: ArrayLike<PageElement> | null
  readonly ownerDocument: { getElementById(id: string): PageElement | null }
  getAttribute(name: string): string | null
  hasAttribute(name: string): boolean
}

/** A focused element as {@link focusByKeyboard} sees it: its role and accessible text. */
export interface Focused {
  readonly role: string
  readonly name: string
}

/** Runs in the page: the role and accessible text of `element` (`null` when nothing has focus). */
const focusedInPage = (element: PageElement | null): Focused => {
  if (element === null) return { role: "", name: "" }
  const tag = element.tagName.toLowerCase()
  const type = (element.getAttribute("type") ?? "text").toLowerCase()
  const role = element.getAttribute("role") ??
    (tag === "a" && element.hasAttribute("href")
      ? "link"
      : tag === "button" || (tag === "input" && ["button", "submit", "reset", "image"].includes(type))
      ? "button"
      : tag === "textarea" || (tag === "input" && ["text", "email", "password", "tel", "url", "number"].includes(type))
      ? "textbox"
      : tag === "input" && type === "search"
      ? "searchbox"
      : tag === "input" && (type === "checkbox" || type === "radio")
      ? type
      : tag === "select"
      ? (element.hasAttribute("multiple") ? "listbox" : "combobox")
      : tag === "summary"
      ? "button"
      : tag)
  const labelledBy = (element.getAttribute("aria-labelledby") ?? "").split(/\s+/).filter((id) => id !== "")
    .map((id) => element.ownerDocument.getElementById(id)?.textContent ?? "").join(" ")
  const labels = Array.from(element.labels ?? []).map((label) => label.textContent ?? "").join(" ")
  const own = tag === "input" || tag === "textarea" || tag === "select"
    ? (role === "button" ? element.value ?? "" : "")
    : element.textContent ?? ""
  const candidates = [labelledBy, element.getAttribute("aria-label") ?? "", labels, own, element.getAttribute("title")]
  const name = candidates.map((c) => (c ?? "").replace(/\s+/g, " ").trim()).find((c) => c !== "") ?? ""
  return { role, name }
}

/** The element that has focus in the page, as a handle. */
const activeElement = (page: Page): Promise<JSHandle<PageElement | null>> =>
  page.evaluateHandle(() => (globalThis as any).document.activeElement as PageElement | null)

/** What has focus in the page, for messages: its role and accessible text (at most 80 characters), or "nothing". */
const describeFocused = (focused: Focused): string =>
  focused.role === "" || focused.role === "body"
    ? "nothing"
    : `${focused.role} "${focused.name.length > 80 ? `${focused.name.slice(0, 79)}…` : focused.name}"`

/**
 * Presses `key` (Tab, or Shift+Tab) until the focused element satisfies `accept` (in Node); throws,
 * naming `what` it looked for and what it focused on the way, when `max` presses do not get there.
 */
const pressUntil = async (
  page: Page,
  accept: (handle: JSHandle<PageElement | null>, focused: Focused) => Promise<boolean> | boolean,
  max: number,
  what: string,
  key: "Tab" | "Shift+Tab" = "Tab"
): Promise<Focused> => {
  const seen: Array<string> = []
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key)
    const handle = await activeElement(page)
    try {
      const focused = await handle.evaluate(focusedInPage)
      if (await accept(handle, focused)) return focused
      seen.push(describeFocused(focused))
    } finally {
      await handle.dispose()
    }
  }
  throw new Error(
    `${key} did not reach ${what} within ${max} presses; it focused: ${seen.join(", ")}; ` +
      `${seen.at(-1) ?? "nothing"} has focus now, on ${page.url()}`
  )
}

/**
 * Presses Tab until the focused element (`document.activeElement`) satisfies `predicate`, which
 * runs in the page and so must not use anything from its surroundings. Throws, naming `what` it
 * looked for and what it focused on the way, when `max` presses do not get there.
 */
export const tabUntil = async (
  page: Page,
  predicate: (element: PageElement | null) => boolean,
  max = 60,
  what = `an element satisfying ${predicate.toString()}`
): Promise<Focused> => pressUntil(page, (handle) => handle.evaluate(predicate), max, what)

/** An element {@link focusByKeyboard} looks for: its role, and its accessible text (exactly, or matching a RegExp). */
export interface KeyboardTarget {
  readonly role?: "link" | "button" | "textbox" | "searchbox" | "checkbox" | "radio" | "combobox" | "listbox" | string
  readonly name: string | RegExp
}

/**
 * Presses Tab until the focused element has `target`'s role (when given) and accessible text: the
 * text of the elements its `aria-labelledby` names, its `aria-label`, its `<label>`s, its text
 * (a button input's value), or its `title`, whitespace collapsed and trimmed. Throws when `max`
 * presses do not get there.
 */
export const focusByKeyboard = (page: Page, target: KeyboardTarget, max = 60): Promise<Focused> =>
  pressUntil(
    page,
    (_, focused) =>
      (target.role === undefined || focused.role === target.role) &&
      (typeof target.name === "string" ? focused.name === target.name : target.name.test(focused.name)),
    max,
    `${target.role ?? "an element"} named ${typeof target.name === "string" ? `"${target.name}"` : target.name}`
  )

/**
 * Presses Tab (or Shift+Tab, `key`) until the one element `target` finds has focus
 * (`document.activeElement`); what has focus then. Throws, naming `target` and what it focused on
 * the way, when `target` finds no element or several, or `max` presses do not get there.
 */
export const tabTo = async (
  page: Page,
  target: Locator,
  max = 60,
  key: "Tab" | "Shift+Tab" = "Tab"
): Promise<Focused> => {
  const found = await target.count()
  if (found !== 1) {
    throw new Error(`${key} cannot reach ${target.toString()}: it finds ${found} elements on ${page.url()}, not one`)
  }
  const element = await target.elementHandle()
  if (element === null) throw new Error(`${target.toString()} is gone from ${page.url()}`)
  try {
    return await pressUntil(
      page,
      (handle) => element.evaluate((el, active) => el === active, handle),
      max,
      target.toString(),
      key
    )
  } finally {
    await element.dispose()
  }
}
