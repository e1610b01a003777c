// The web UI in headless Chromium, as a person uses it: create a case, run it
// against the example agent, watch the run finish, read its detail, see a hostile
// answer shown as text, open the trends chart. Screenshots go to $SHOTS.
// Run by crates/gavel/tests/browser.rs; exits non-zero on the first failure.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const base = process.env.GAVEL_UI;
const shots = process.env.SHOTS;
const hostileRun = process.env.HOSTILE_RUN;
const profile = mkdtempSync(join(tmpdir(), "gavel-chromium-"));

const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
  ],
  viewport: { width: 1200, height: 900 },
});

function check(ok, what) {
  if (!ok) throw new Error("browser check failed: " + what);
  console.log("ok: " + what);
}

const page = context.pages()[0] || (await context.newPage());
const dialogs = [];
page.on("dialog", async (d) => {
  dialogs.push(d.message());
  await d.dismiss();
});
try {
  // 1. Create a case; a bad field is shown next to the field first.
  await page.goto(base + "/suites/quickstart");
  await page.click("#new-case");
  await page.fill("#f-id", "ui-listings");
  await page.fill("#f-name", "Listings, from the browser");
  await page.fill("#f-rounds-0-input", "What are my listings?");
  await page.fill("#f-expected_tools", "get_listings");
  await page.fill("#f-tags", "ui, listings");
  await page.fill("#f-threshold", "lots");
  await page.click("#save-case");
  await page.waitForSelector("#error-threshold");
  check((await page.textContent("#error-threshold")).includes("lots"), "bad threshold named by field");
  await page.screenshot({ path: join(shots, "1-case-field-error.png"), fullPage: true });
  await page.fill("#f-threshold", "");
  await page.click("#save-case");
  await page.waitForURL(/\/suites\/quickstart$/);
  check((await page.content()).includes("ui-listings"), "the new case is listed");

  // 2. Run the cases tagged `ui` and watch the run finish live.
  await page.goto(base + "/suites/quickstart?tag=ui");
  await page.screenshot({ path: join(shots, "2-suite-tag-ui.png"), fullPage: true });
  await page.click("#run-suite button");
  await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
  await page.waitForFunction(
    () => {
      const s = document.querySelector("#run-status");
      return s && s.textContent.trim() === "completed" && document.querySelector(".execution");
    },
    null,
    { timeout: 180000, polling: 500 }
  );
  const detail = await page.content();
  check(detail.includes("ui-listings"), "the run detail shows the case");
  check((await page.textContent(".execution .status")).trim() === "pass", "the case passed");
  check(detail.includes("get_listings"), "the tool call is shown");
  check(detail.includes("tools-called") || detail.includes("tools"), "the verdicts are shown");
  await page.screenshot({ path: join(shots, "3-run-detail.png"), fullPage: true });

  // 3. A hostile answer is text, not markup.
  await page.goto(base + "/runs/" + hostileRun);
  const output = await page.textContent(".output");
  check(output.includes("<script>window.__owned = 1</script>"), "the script shows as text");
  check((await page.$$(".output b, .output script, .output img")).length === 0, "no element came from the answer");
  check((await page.evaluate(() => window.__owned)) === undefined, "no script from the answer ran");
  check(dialogs.length === 0, "no dialog was opened");
  await page.screenshot({ path: join(shots, "4-hostile-output-as-text.png"), fullPage: true });

  // 4. The trends chart.
  await page.goto(base + "/trends");
  await page.waitForSelector("#charts[data-ready=true] canvas", { timeout: 30000 });
  check((await page.$$("#charts .chart")).length >= 1, "a trend chart is drawn");
  await page.screenshot({ path: join(shots, "5-trends.png"), fullPage: true });
} catch (e) {
  await page.screenshot({ path: join(shots, "failure.png"), fullPage: true }).catch(() => {});
  console.error(e.stack || String(e));
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
