/**
 * The browser harness itself, against a small server of this test on 127.0.0.1 (not the app):
 * requests off loopback are refused and reported, axe-core finds violations and passes a clean
 * page, a form works by keyboard alone, and screenshots are written.
 */
import { readFileSync, statSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { axeViolations, focusByKeyboard, launch, openContext, requireBrowser, screenshot, tabUntil } from "./Browser.js"

const pixel = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64"
)

const html = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`

const strict = { "content-security-policy": "default-src 'self'" }

const pages: Record<string, { readonly body: string; readonly headers?: Record<string, string> }> = {
  "/outside": {
    body: html(
      "Outside",
      `<main><h1>Loaded</h1><img src="/pixel.png" alt="local"><img src="http://example.com/x.png" alt="remote"></main>
<script>fetch("https://203.0.113.1/").catch(() => { document.body.dataset.fetched = "refused" })</script>`
    )
  },
  "/websocket": {
    body: html(
      "WebSocket",
      `<main><h1>WebSocket</h1></main><script>new WebSocket("ws://198.51.100.1/live").onerror = () => {}</script>`
    )
  },
  "/axe-bad": {
    body: `<!doctype html><html><body><img src="/pixel.png"><input type="text" name="q"></body></html>`,
    headers: strict
  },
  "/axe-good": {
    body: html(
      "Search",
      `<main><h1>Search</h1><label for="q">Container number</label><input id="q" type="text" name="q"></main>`
    ),
    headers: strict
  },
  "/form": {
    body: html(
      "Sign in",
      `<main><h1>Sign in</h1><p><a href="/help">Help</a></p>
<form method="post" action="/signin">
<label for="email">Email</label> <input id="email" name="email" type="email">
<button type="submit">Sign in</button>
</form></main>`
    ),
    headers: strict
  }
}

if (requireBrowser("browser harness")) {
  describe("browser harness", () => {
    let browser: Browser
    let server: Http.Server
    let base: string
    const posts: Array<string> = []

    beforeAll(async () => {
      server = Http.createServer((req, res) => {
        const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname
        if (req.method === "POST" && path === "/signin") {
          let body = ""
          req.on("data", (chunk: Buffer) => void (body += chunk.toString("utf8")))
          req.on("end", () => {
            posts.push(body)
            res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
            res.end(html("Signed in", "<main><h1>Signed in</h1></main>"))
          })
          return
        }
        if (path === "/pixel.png") {
          res.writeHead(200, { "content-type": "image/png" })
          res.end(pixel)
          return
        }
        const page = pages[path]
        res.writeHead(page ? 200 : 404, { "content-type": "text/html; charset=utf-8", ...page?.headers })
        res.end(page?.body ?? html("Not found", "<main><h1>Not found</h1></main>"))
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      browser = await launch()
    }, 30_000)

    afterAll(async () => {
      await browser?.close()
      await new Promise((resolve) => server?.close(resolve))
    }, 30_000)

    it("refuses and reports requests that leave loopback, and the page still loads", async () => {
      const { context, outside } = await openContext(browser, { baseURL: base })
      try {
        const page = await context.newPage()
        const response = await page.goto("/outside")
        expect(response?.status()).toBe(200)
        await page.waitForFunction(() => (globalThis as any).document.body.dataset.fetched === "refused")
        expect(await page.locator("h1").textContent()).toBe("Loaded")
        expect(await page.locator("img[alt=local]").evaluate((img: any) => img.naturalWidth as number)).toBe(1)
        expect([...outside()].sort()).toEqual(["http://example.com/x.png", "https://203.0.113.1/"])
      } finally {
        await context.close()
      }
    }, 30_000)

    it("refuses and reports WebSockets that leave loopback", async () => {
      const { context, outside } = await openContext(browser, { baseURL: base })
      try {
        const page = await context.newPage()
        await page.goto("/websocket")
        await expect.poll(() => outside(), { timeout: 10_000 }).toEqual(["ws://198.51.100.1/live"])
      } finally {
        await context.close()
      }
    }, 30_000)

    it(
      "axe-core finds the missing alt text and label, and nothing on a well-formed page, under a strict CSP",
      async () => {
        const { context, outside } = await openContext(browser, { baseURL: base })
        try {
          const page = await context.newPage()
          await page.goto("/axe-bad")
          const bad = await axeViolations(page)
          expect(bad.map((v) => v.id)).toEqual(expect.arrayContaining(["image-alt", "label"]))
          expect(bad.find((v) => v.id === "image-alt")?.nodes).toEqual(["img"])
          await page.goto("/axe-good")
          expect(await axeViolations(page)).toEqual([])
          expect(outside()).toEqual([])
        } finally {
          await context.close()
        }
      },
      30_000
    )

    it("reaches the form's field and button by Tab alone, and Enter submits it", async () => {
      const { context, outside } = await openContext(browser, { baseURL: base })
      try {
        const page = await context.newPage()
        await page.goto("/form")
        expect(await focusByKeyboard(page, { role: "textbox", name: "Email" })).toEqual({
          role: "textbox",
          name: "Email"
        })
        await page.keyboard.type("ops@example.com")
        await focusByKeyboard(page, { role: "button", name: /^sign in$/i })
        const navigated = page.waitForURL("**/signin")
        await page.keyboard.press("Enter")
        await navigated
        expect(await page.locator("h1").textContent()).toBe("Signed in")
        expect(posts).toEqual(["email=ops%40example.com"])

        await page.goto("/form")
        await tabUntil(page, (element) => element?.getAttribute("type") === "email")
        await expect(focusByKeyboard(page, { role: "button", name: "Register" }, 5)).rejects.toThrow(
          /Tab did not reach button named "Register" within 5 presses; it focused: button "Sign in"/
        )
        expect(outside()).toEqual([])
      } finally {
        await context.close()
      }
    }, 30_000)

    it("writes a full-page PNG screenshot", async () => {
      const { context } = await openContext(browser, { baseURL: base })
      try {
        const page = await context.newPage()
        await page.goto("/form")
        const path = await screenshot(page, "harness-form")
        expect(path).toMatch(/test-artifacts\/screenshots\/harness-form\.png$/)
        expect(statSync(path).size).toBeGreaterThan(0)
        expect(readFileSync(path).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
      } finally {
        await context.close()
      }
    }, 30_000)
  })
}
