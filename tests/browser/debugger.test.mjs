// `germanium debug` in a real browser: Debian's Chromium, driven by playwright-core.
// Opens the page for a failing example, jumps to the failed check, and checks what a person
// sees: the highlighted source line, the objects and arrows of the heap graphs, the
// counterexample's values; navigates with the buttons; saves a screenshot.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const germanium = join(root, "target", "release", "germanium");
const example = join(root, "examples", "linked.vpr");
const shots = join(root, "target", "browser");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";

let server;
let browser;
let page;
let address;

// Starts `germanium debug` on a free port and waits for the address it prints.
function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(germanium, ["debug", "--port", "0", example], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error("no address after 60 s: " + out + err)), 60000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ child, url: m[1] }); }
    });
    child.stderr.on("data", (d) => { err += d; });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`germanium debug exited (${code}): ${err}`)); });
  });
}

before(async () => {
  const started = await startServer();
  server = started.child;
  address = started.url;
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
  await page.goto(address);
  await page.waitForSelector("#tree li.selected");
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill();
});

test("the page names the file, its result and its members", async () => {
  assert.match(await page.textContent("#file"), /linked\.vpr$/);
  assert.equal(await page.textContent("#result"), "failed");
  const members = await page.$$eval("#member option", (os) => os.map((o) => o.textContent));
  assert.ok(members.some((m) => m.startsWith("prepend")), members.join(", "));
  // The first record shown is the member's root, with the member's signature highlighted.
  assert.equal(await page.getAttribute("#tree li.selected", "data-step"), "member");
});

test("jumping to the failed check shows it, its line and its counterexample heap", async () => {
  await page.click("#failure-jump");
  await page.waitForSelector("#failure.shown");
  const failure = await page.textContent("#failure");
  assert.match(failure, /assert\.failed:assertion\.false/);
  assert.match(failure, /unproved query/);
  // The assertion's line (12) is the highlighted one.
  const lines = await page.$$eval("#source .line.hl", (ls) => ls.map((l) => l.dataset.line));
  assert.deepEqual(lines, ["12"]);
  // The counterexample heap: two objects, n's next pointing at head's object.
  const objects = await page.$$eval("#counterexample-graph g.object", (gs) => gs.map((g) => g.dataset.name));
  assert.deepEqual(objects.sort(), ["o1", "o2"]);
  const arrows = await page.$$eval("#counterexample-graph path.arrow", (ps) => ps.map((p) => `${p.dataset.from}->${p.dataset.to}`));
  assert.deepEqual(arrows, ["o2.next->o1"]);
  const titles = await page.$$eval("#counterexample-graph g.object text", (ts) => ts.map((t) => t.textContent));
  assert.ok(titles.includes("o1  ← head"), titles.join(" | "));
  assert.ok(titles.includes("o2  ← n"), titles.join(" | "));
  assert.ok(titles.includes("val = 0"), "n.val = 0 is shown: " + titles.join(" | "));
  const variables = await page.$$eval("#counterexample-graph text.variable", (ts) => ts.map((t) => t.textContent));
  assert.ok(variables.includes("head = o1") && variables.includes("n = o2"), variables.join(", "));
  // A run of the method confirmed it: the heap drawn is that run's, from the pre-state named.
  const status = await page.textContent("#counterexample-status");
  assert.match(status, /^confirmed: a run from .*o2\.val = 0.* fails the check$/);
  // The symbolic heap graph of the same state: two objects, n's next points at head's.
  const symbolic = await page.$$eval("#heap-graph g.object", (gs) => gs.length);
  assert.equal(symbolic, 2);
  const symbolicArrows = await page.$$eval("#heap-graph path.arrow", (ps) => ps.length);
  assert.equal(symbolicArrows, 1);
  // The store and path conditions panes are filled.
  assert.ok((await page.$$("#store tr")).length >= 3);
  assert.ok((await page.$$("#path li")).length > 0);
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, "debugger.png") });
});

test("parent, previous, next and child navigate the execution tree", async () => {
  const selected = async () => Number(await page.getAttribute("#tree li.selected", "data-id"));
  const failed = await selected();
  await page.click("#parent");
  await page.waitForFunction((id) => document.body.dataset.record !== String(id), failed);
  const parent = await selected();
  assert.notEqual(parent, failed);
  await page.click("#child");
  await page.waitForFunction((id) => document.body.dataset.record !== String(id), parent);
  assert.equal(Number(await page.getAttribute("#tree li.selected", "data-id")) > parent, true);
  await page.click("#previous");
  await page.waitForFunction((id) => document.body.dataset.record === String(id), parent);
  await page.click("#next");
  await page.waitForFunction((id) => document.body.dataset.record !== String(id), parent);
  // Clicking a record in the tree selects it and highlights its source.
  await page.click("#tree li:first-child");
  await page.waitForFunction(() => document.querySelector("#tree li.selected").dataset.step === "member");
  const lines = await page.$$eval("#source .line.hl", (ls) => ls.map((l) => l.dataset.line));
  assert.deepEqual(lines, ["6"]);
});
