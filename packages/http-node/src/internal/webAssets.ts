/** The style sheet of the web application, served from `/app/assets/app.css` (no CDN). */
export const css = `
:root { color-scheme: light; --ink: #1b1f23; --muted: #57606a; --line: #d0d7de; --accent: #0b5cad;
  --prod: #8a1c1c; --uat: #6a4c00; --ok: #116329; --bad: #a40e26; font-family: system-ui, sans-serif; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #f6f8fa; line-height: 1.45; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible,
summary:focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
.banner { padding: .5rem 1rem; color: #fff; display: flex; gap: 1rem; flex-wrap: wrap; align-items: center; }
.banner.production { background: var(--prod); }
.banner.uat { background: var(--uat); }
.banner code { background: rgba(255,255,255,.18); color: #fff; padding: 0 .3rem; border-radius: 3px; }
header.top { background: #fff; border-bottom: 1px solid var(--line); padding: .5rem 1rem; display: flex;
  gap: 1rem; flex-wrap: wrap; align-items: center; justify-content: space-between; }
header.top form { display: inline-flex; gap: .4rem; align-items: center; margin: 0; }
nav.main ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: 0; padding: .5rem 1rem;
  background: #fff; border-bottom: 1px solid var(--line); }
nav.main a[aria-current="page"] { font-weight: 700; text-decoration: none; color: var(--ink); }
main { max-width: 72rem; margin: 1rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f4; }
form.inline { display: inline; margin: 0; }
.card form.inline + form.inline { margin-left: .4rem; }
.stack { display: grid; gap: .6rem; max-width: 32rem; }
label { font-weight: 600; display: block; }
input, select, textarea { font: inherit; padding: .35rem .45rem; border: 1px solid #8c959f; border-radius: 4px; }
button { font: inherit; padding: .35rem .8rem; border-radius: 4px; border: 1px solid #1f6feb; background: #1f6feb;
  color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); }
.notice { border-left: 4px solid var(--accent); background: #fff; padding: .6rem .9rem; margin: 1rem 0; }
.notice.error { border-color: var(--bad); }
.notice.success { border-color: var(--ok); }
.secret { font-family: ui-monospace, monospace; background: #fff8c5; padding: .4rem; word-break: break-all; }
pre { background: #fff; border: 1px solid var(--line); padding: .6rem; overflow-x: auto; }
.muted { color: var(--muted); }
ol.checklist li.done { color: var(--ok); }
.skip { position: absolute; left: -10000px; top: 0; background: #fff; padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: 0; }
td code { word-break: break-all; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.card { background: #fff; border: 1px solid var(--line); padding: 1rem; border-radius: 6px; margin: 1rem 0; }
`

/**
 * The little script of the web application, served from `/app/assets/app.js`: copy buttons and the
 * live delivery log (left alone while focus or an open answer is inside it, or the tab is hidden;
 * its refreshes do not keep the session alive). Every form works without it.
 */
export const js = `
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy]")
  if (button === null) return
  const source = document.getElementById(button.getAttribute("data-copy"))
  if (source === null || navigator.clipboard === undefined) return
  navigator.clipboard.writeText(source.textContent.trim()).then(() => {
    const status = document.getElementById(button.getAttribute("data-copy") + "-status")
    if (status !== null) status.textContent = "Copied."
  })
})
const live = document.querySelector("[data-live]")
if (live !== null) {
  const refresh = () =>
    document.hidden || live.contains(document.activeElement) || live.querySelector("details[open]") !== null
      ? undefined
      : fetch(location.href, { headers: { accept: "text/html", "x-tradeflow-refresh": "1" } })
    .then((r) => r.ok ? r.text() : Promise.reject(r.status))
    .then((text) => {
      const next = new DOMParser().parseFromString(text, "text/html").querySelector("[data-live]")
      if (next !== null && next.innerHTML !== live.innerHTML) live.innerHTML = next.innerHTML
    })
    .catch(() => undefined)
  setInterval(refresh, 3000)
}
`
