// The trace pages, judged in headless Chromium against the JSON document they embed.
//
//   node trace_page.mjs --bin BIN --models DIR --work DIR --modules NODE_MODULES [--screenshot PNG]
//
// For every built-in model whose verdict is a violation or a deadlock, the page that
// `check --html-dir` writes must load without a console error, show one timeline row per step
// of the document's trace, and show at every step (reached with the keys ← → Home End) the
// world the document's `state` describes — the facts are derived here, independently of the
// page's script, from docs/html.md's list — and the step's beliefs. Every counterexample's
// Mermaid diagram must render with Mermaid itself. Exit 0 when all of it holds.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
for (const need of ["bin", "models", "work", "modules"]) {
  if (!args[need]) {
    console.error(`error: --${need} is missing\n  usage: node trace_page.mjs --bin BIN --models DIR --work DIR --modules NODE_MODULES`);
    process.exit(2);
  }
}
const require = createRequire(path.join(path.resolve(args.modules), "resolve.js"));
const { chromium } = require("playwright-core");
const mermaidJs = require.resolve("mermaid/dist/mermaid.min.js");

const pages = path.resolve(args.work, "pages");
mkdirSync(pages, { recursive: true });
const run = spawnSync(args.bin, ["check", args.models, "--format", "json", "--html-dir", pages], {
  maxBuffer: 1 << 30,
  encoding: "utf8",
});
if (run.error || run.stdout === "") {
  console.error("error: interlock did not run:", run.error || run.stderr);
  process.exit(2);
}
const doc = JSON.parse(run.stdout);

// --- the facts a state shows, written from docs/html.md -----------------------------------
const shown = (v) =>
  v === null ? "nil" : typeof v === "string" ? `'${v}'` : typeof v === "object" ? v.process : `${v}`;
const cols = (values) =>
  values === null ? "deleted" : Object.keys(values).map((k) => `${k}=${shown(values[k])}`).join(" ");
function expectedFacts(state) {
  const f = [];
  state.rows.forEach((row) => {
    f.push(`${row.name}: ${cols(row.values)}`);
    if (row.pending !== null) f.push(`${row.name}: uncommitted by ${row.pending.by}: ${cols(row.pending.values)}`);
    row.locks.forEach((l) => f.push(`${row.name}: locked ${l.mode} by ${l.by}`));
    row.queue.forEach((q) => f.push(`${row.name}: ${q.by} waits (${q.mode})`));
  });
  state.gaps.forEach((g) => f.push(`gap ${g.range} of ${g.table}: locked by ${g.by}`));
  state.redis.forEach((node) => {
    const name = node.primary ? node.node : `${node.node} (replica)`;
    if (node.down) f.push(`${name}: down`);
    node.keys.forEach((k) =>
      f.push(`${name}: ${k.key} = ${shown(k.value)} (${k.ttl_ms === null ? "no ttl" : `ttl ${k.ttl_ms}ms`})`),
    );
  });
  state.mutexes.forEach((mx) => {
    const name = `mutex ${mx.name}@${mx.instance}`;
    if (mx.holder !== null) f.push(`${name}: held by ${mx.holder}`);
    mx.queue.forEach((q) => f.push(`${name}: ${q} waits`));
  });
  state.ghosts.forEach((g) => f.push(`${g.name} = ${shown(g.value)}`));
  state.processes.forEach((p) => {
    const parts = [`${p.name}: ${p.status}`];
    if (p.paused) parts.push("paused");
    if (p.in_transaction) parts.push("in a transaction");
    if (p.line !== null) parts.push(`next L${p.line}`);
    f.push(parts.join(", "));
  });
  return f;
}

// `models/redis/lost-reply.model` → `models-redis-lost-reply.html`, as `matrix::page_name`.
const pageName = (file) => {
  const t = file.replace(/^\.\//, "");
  return `${t.endsWith(".model") ? t.slice(0, -6) : t}`.replace(/[/\\]/g, "-") + ".html";
};
const fileOf = (label) => label.split(" [")[0];

const failures = [];
const fail = (where, what) => failures.push(`${where}: ${what}`);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
let errors = [];
page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
page.on("pageerror", (e) => errors.push(String(e)));

const byFile = new Map();
doc.results.forEach((r) => {
  const f = fileOf(r.file);
  if (!byFile.has(f)) byFile.set(f, []);
  byFile.get(f).push(r);
});
let checked = 0, steps = 0;
const diagrams = [];
for (const [file, results] of byFile) {
  if (!results.some((r) => r.trace && ["violated", "deadlock"].includes(r.verdict.kind))) continue;
  errors = [];
  await page.goto(pathToFileURL(path.join(pages, pageName(file))).href);
  const extras = await page.evaluate(() => JSON.parse(document.getElementById("extras").textContent));
  for (const [k, r] of results.entries()) {
    if (!r.trace || !["violated", "deadlock"].includes(r.verdict.kind)) continue;
    const where = r.file;
    if (results.length > 1) await page.click(`#results button:nth-child(${k + 1})`);
    const t = r.trace;
    const rows = await page.locator("tr.step:not(.start)").count();
    if (rows !== t.steps.length) fail(where, `${rows} timeline rows for ${t.steps.length} steps`);
    await page.keyboard.press("Home");
    for (let i = 0; i <= t.steps.length; i++) {
      const seen = await page.evaluate(() => ({
        step: document.getElementById("world").dataset.step,
        facts: Array.from(document.querySelectorAll("#world .fact"), (e) => e.textContent),
        changed: Array.from(document.querySelectorAll("#world .fact.changed"), (e) => e.textContent),
        beliefs: Array.from(document.querySelectorAll("#world .belief"), (e) => e.textContent),
        current: document.querySelector("tr.step.current")?.dataset.step,
      }));
      const want = expectedFacts(i === 0 ? t.start : t.steps[i - 1].state);
      const before = i <= 1 ? expectedFacts(t.start) : expectedFacts(t.steps[i - 2].state);
      const wantChanged = i === 0 ? [] : want.filter((f) => !before.includes(f));
      const wantBeliefs = i === 0 ? [] : t.steps[i - 1].beliefs.map((b) => `⚠ ${b}`);
      if (seen.step !== String(i) || seen.current !== String(i)) fail(where, `at step ${i} the page shows step ${seen.step}`);
      if (!same(seen.facts, want)) fail(where, `step ${i}: world ${JSON.stringify(seen.facts)} instead of ${JSON.stringify(want)}`);
      if (!same(seen.changed, wantChanged)) fail(where, `step ${i}: marks ${JSON.stringify(seen.changed)} as new`);
      if (!same(seen.beliefs, wantBeliefs)) fail(where, `step ${i}: beliefs ${JSON.stringify(seen.beliefs)}`);
      steps++;
      await page.keyboard.press("ArrowRight");
    }
    await page.keyboard.press("Home");
    await page.keyboard.press("End");
    const end = await page.evaluate(() => document.getElementById("world").dataset.step);
    if (end !== String(t.steps.length)) fail(where, `End shows step ${end}`);
    if (extras[k] && extras[k].mermaid) diagrams.push([where, extras[k].mermaid]);
    else fail(where, "no Mermaid diagram on the page");
    checked++;
  }
  if (errors.length) fail(file, `console errors: ${errors.join(" | ")}`);
}

// --- every diagram through Mermaid itself --------------------------------------------------
const blank = await browser.newPage();
blank.on("pageerror", (e) => fail("mermaid page", String(e)));
await blank.setContent("<!DOCTYPE html><html><body></body></html>");
await blank.addScriptTag({ content: readFileSync(mermaidJs, "utf8") });
const rendered = await blank.evaluate(async (all) => {
  window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
  const out = [];
  for (const [i, [where, text]] of all.entries()) {
    try {
      const { svg } = await window.mermaid.render(`d${i}`, text);
      out.push([where, svg.includes("<svg") ? null : "no svg"]);
    } catch (e) {
      out.push([where, String(e && e.message ? e.message : e)]);
    }
  }
  return out;
}, diagrams);
for (const [where, err] of rendered) if (err) fail(where, `Mermaid: ${err}`);

if (args.screenshot) {
  await page.goto(pathToFileURL(path.join(pages, pageName("models/redlock/pause-after-acquire.model"))).href);
  const r = doc.results.find((x) => x.file === "models/redlock/pause-after-acquire.model");
  const first = r.trace.steps.findIndex((s) => s.beliefs.length);
  for (let i = 0; i <= first; i++) await page.keyboard.press("ArrowRight");
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: args.screenshot });
}
await browser.close();

console.log(`trace pages: ${checked} counterexamples, ${steps} steps compared, ${diagrams.length} Mermaid diagrams rendered`);
if (failures.length) {
  console.error(`${failures.length} failures:\n` + failures.slice(0, 40).join("\n"));
  process.exit(1);
}
