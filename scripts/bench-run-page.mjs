// A run page loaded in headless Chromium, as a person opens it: ROUNDS loads
// (default 5) of URL in a fresh tab each, timed by the page's own navigation
// timing (response end, DOMContentLoaded, load), with the HTML's size; then a
// filter (`show=fail`, the page's own failures filter, applied by the server)
// and a search (`q=`), timed the same way. The last load's screenshot goes to SHOT when set.
//
//   node scripts/bench-run-page.mjs URL
//
// Uses the playwright-core the browser tests install (scripts/setup.d/30-chromium.sh).
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(
  new URL("../crates/gavel/tests/browser/package.json", import.meta.url),
);
const { chromium } = require("playwright-core");

const url = process.argv[2];
if (!url) {
  console.error("usage: node scripts/bench-run-page.mjs URL");
  process.exit(2);
}
const rounds = Number(process.env.ROUNDS || 5);
const profile = mkdtempSync(join(tmpdir(), "gavel-bench-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
  viewport: { width: 1200, height: 900 },
});

/// Navigation timing of the page's last navigation, in ms from its start.
async function timing(page) {
  return page.evaluate(() => {
    const [n] = performance.getEntriesByType("navigation");
    return {
      response: n.responseEnd,
      dom: n.domContentLoadedEventEnd,
      load: n.loadEventEnd,
      bytes: n.decodedBodySize,
    };
  });
}

function show(what, t) {
  const f = (ms) => (ms / 1000).toFixed(3);
  console.log(
    `${what}: response ${f(t.response)} s, DOMContentLoaded ${f(t.dom)} s, load ${f(t.load)} s, ${t.bytes} bytes of HTML`,
  );
}

try {
  let page;
  for (let i = 1; i <= rounds; i++) {
    page = await context.newPage();
    const response = await page.goto(url, { waitUntil: "load" });
    if (!response || response.status() !== 200) {
      throw new Error(`HTTP ${response && response.status()} for ${url}`);
    }
    show(`run page load ${i}`, await timing(page));
    if (i < rounds) await page.close();
  }
  if (process.env.SHOT) await page.screenshot({ path: process.env.SHOT });
  const filtered = new URL(url);
  filtered.searchParams.set("show", "fail");
  await page.goto(filtered.toString(), { waitUntil: "load" });
  show("filtered to failures", await timing(page));
  const searched = new URL(url);
  searched.searchParams.set("q", "case-0999");
  await page.goto(searched.toString(), { waitUntil: "load" });
  show("searched for case-0999", await timing(page));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
