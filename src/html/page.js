// The trace page: reads the verdict document (docs/json.md) embedded in #data, and the
// model sources and diagrams in #extras, and draws one result at a time. Every text goes
// in through textContent: nothing in a model becomes markup.
"use strict";
(function () {
  const doc = JSON.parse(document.getElementById("data").textContent);
  const extras = JSON.parse(document.getElementById("extras").textContent);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const value = (v) => {
    if (v === null) return "nil";
    if (typeof v === "string") return "'" + v + "'";
    if (typeof v === "object" && "process" in v) return v.process;
    return String(v);
  };
  const columns = (vs) => vs === null ? "deleted"
    : Object.entries(vs).map(([k, v]) => k + "=" + value(v)).join(" ");

  // The world as a list of facts, in the document's order (docs/html.md says which).
  function facts(state) {
    const out = [];
    for (const r of state.rows) {
      out.push(r.name + ": " + columns(r.values));
      if (r.pending) out.push(r.name + ": uncommitted by " + r.pending.by + ": " + columns(r.pending.values));
      for (const l of r.locks) out.push(r.name + ": locked " + l.mode + " by " + l.by);
      for (const q of r.queue) out.push(r.name + ": " + q.by + " waits (" + q.mode + ")");
    }
    for (const g of state.gaps) out.push("gap " + g.range + " of " + g.table + ": locked by " + g.by);
    for (const n of state.redis) {
      const role = n.primary ? "" : " (replica)";
      if (n.down) out.push(n.node + role + ": down");
      for (const k of n.keys) {
        const ttl = k.ttl_ms === null ? "no ttl" : "ttl " + k.ttl_ms + "ms";
        out.push(n.node + role + ": " + k.key + " = " + value(k.value) + " (" + ttl + ")");
      }
    }
    for (const mx of state.mutexes) {
      if (mx.holder !== null) out.push("mutex " + mx.name + "@" + mx.instance + ": held by " + mx.holder);
      for (const q of mx.queue) out.push("mutex " + mx.name + "@" + mx.instance + ": " + q + " waits");
    }
    for (const g of state.ghosts) out.push(g.name + " = " + value(g.value));
    for (const p of state.processes) {
      let t = p.name + ": " + p.status;
      if (p.paused) t += ", paused";
      if (p.in_transaction) t += ", in a transaction";
      if (p.line !== null) t += ", next L" + p.line;
      out.push(t);
    }
    return out;
  }

  let current = -1, step = 0, keyed = false;
  const nav = document.getElementById("results");
  const main = document.getElementById("main");

  function showResult(i) {
    current = i;
    step = 0;
    for (const [k, b] of Array.from(nav.children).entries()) b.classList.toggle("current", k === i);
    draw();
  }

  function header(r) {
    const s = el("section", "head");
    const h = el("h2");
    h.append(el("span", "", r.file + (r.model ? ": " + r.model : "") + " — "));
    h.append(el("span", "verdict " + (r.met ? "met" : "unmet"), r.summary || r.verdict.kind));
    s.append(h);
    const exp = r.expected ? "expected " + r.expected.kind + (r.expected.property ? " " + r.expected.property : "") : "";
    const st = r.stats ? r.stats.states + " states, " + r.stats.transitions + " transitions, depth " + r.stats.depth : "";
    s.append(el("div", "muted", [exp, r.met ? "as expected" : "not as expected", st].filter(Boolean).join(" · ")));
    for (const w of r.warnings || []) s.append(el("div", "belief", "⚠ " + w.message + (w.line ? " (L" + w.line + ")" : "")));
    return s;
  }

  function draw() {
    const r = doc.results[current];
    const x = extras[current] || {};
    main.replaceChildren();
    const left = el("section", "story");
    left.append(header(r));
    if (r.diagnostics) {
      left.append(el("pre", "", r.diagnostics.rendered));
      main.append(left);
      return;
    }
    const t = r.trace;
    if (!t) {
      left.append(el("p", "muted", "No counterexample: nothing to step through."));
      main.append(left);
      return;
    }
    const ol = el("ol", "summary");
    for (const line of t.summary) ol.append(el("li", "", line));
    left.append(ol);
    if (t.loop_start !== null) {
      left.append(el("div", "banner", "↻ From step " + t.loop_start + " on, the steps repeat forever."));
    }
    left.append(timeline(r, t));
    if (t.waits.length) left.append(waits(t));
    const more = el("details");
    more.append(el("summary", "", "Replay token and diagrams"));
    more.append(el("p", "", "interlock check " + r.file.replace(/ \[.*\]$/, "") + " --path '" + t.replay + "'"));
    if (x.mermaid) { more.append(el("h2", "", "Mermaid")); more.append(el("pre", "mermaid-source", x.mermaid)); }
    if (x.dot) { more.append(el("h2", "", "Graphviz")); more.append(el("pre", "dot-source", x.dot)); }
    left.append(more);
    main.append(left);
    const world = el("aside", "world");
    world.id = "world";
    main.append(world);
    select(0);
  }

  function timeline(r, t) {
    const procs = t.start.processes.map((p) => p.name);
    const box = el("div", "lanes");
    const table = el("table", "timeline");
    const head = el("tr");
    for (const h of ["#", "time"].concat(procs, ["environment"])) head.append(el("th", "", h));
    table.append(head);
    const start = el("tr", "step start");
    start.dataset.step = "0";
    start.append(el("td", "num", "0"), el("td", "time", "0ms"));
    const cell = el("td", "", "start");
    cell.colSpan = procs.length + 1;
    start.append(cell);
    table.append(start);
    t.steps.forEach((s, i) => {
      const tr = el("tr", "step");
      tr.dataset.step = String(i + 1);
      if (t.loop_start !== null && s.index >= t.loop_start) tr.classList.add("loop");
      tr.append(el("td", "num", String(s.index)), el("td", "time", s.time_ms + "ms"));
      for (const [k, name] of procs.entries()) {
        if (s.actor === name) {
          const td = el("td", "act");
          if (s.line !== null) td.append(el("span", "line", "L" + s.line + " "));
          td.append(document.createTextNode(s.did));
          if (s.beliefs.length) td.append(el("span", "belief-mark", " ⚠"));
          tr.append(td);
        } else {
          const p = s.state.processes[k];
          const mark = p.paused ? "paused" : p.status.startsWith("waiting") ? "waits" : "";
          tr.append(el("td", "idle", mark));
        }
      }
      const env = el("td", "env");
      if (s.actor === null) env.append(el("span", s.did.startsWith("⚡") ? "fault" : "", s.did));
      if (s.world) env.append(el("div", "muted", s.world));
      tr.append(env);
      tr.addEventListener("click", () => select(i + 1));
      table.append(tr);
    });
    box.append(table);
    return box;
  }

  function select(k) {
    const r = doc.results[current];
    const t = r.trace;
    const x = extras[current] || {};
    step = Math.max(0, Math.min(k, t.steps.length));
    for (const tr of document.querySelectorAll("tr.step")) tr.classList.toggle("current", tr.dataset.step === String(step));
    const row = document.querySelector("tr.step.current");
    if (row && keyed) row.scrollIntoView({ block: "nearest" });
    const world = document.getElementById("world");
    world.replaceChildren();
    const s = step > 0 ? t.steps[step - 1] : null;
    world.append(el("h2", "", step === 0 ? "Before the first step" : "After step " + step + " of " + t.steps.length + " · " + s.time_ms + "ms"));
    world.dataset.step = String(step);
    if (s) {
      world.append(el("div", "did", (s.actor || "environment") + ": " + s.did));
      const lines = (x.source || "").split("\n");
      if (s.line !== null && lines[s.line - 1] !== undefined) {
        world.append(el("div", "quote", "L" + s.line + "  " + lines[s.line - 1].trim()));
      }
      if (s.beliefs.length) {
        const ul = el("ul", "beliefs");
        for (const b of s.beliefs) ul.append(el("li", "belief", "⚠ " + b));
        world.append(ul);
      }
      if (s.held.length) world.append(el("div", "held", "holds: " + s.held.map((h) => h.by + " → " + h.what).join(", ")));
    }
    const state = s ? s.state : t.start;
    const before = step > 1 ? new Set(facts(t.steps[step - 2].state)) : new Set(facts(t.start));
    const ul = el("ul", "facts");
    for (const f of facts(state)) ul.append(el("li", "fact" + (step > 0 && !before.has(f) ? " changed" : ""), f));
    world.append(el("h2", "", "The world"));
    world.append(ul);
    if (step === t.steps.length && t.failure) world.append(el("div", "verdict unmet", "✗ " + t.failure));
    world.append(el("div", "keys", "Keys: ← → step · Home start · End last step · or click a row"));
  }

  function waits(t) {
    const edges = t.wait_cycle || t.waits;
    const names = [];
    for (const e of edges) for (const n of [e.waiter, e.holder]) if (!names.includes(n)) names.push(n);
    const ns = "http://www.w3.org/2000/svg";
    const size = 260, c = size / 2, rad = names.length > 1 ? 85 : 0;
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "waits");
    svg.setAttribute("width", String(size));
    svg.setAttribute("height", String(size));
    const defs = document.createElementNS(ns, "defs");
    const marker = document.createElementNS(ns, "marker");
    for (const [a, v] of [["id", "arrow"], ["viewBox", "0 0 10 10"], ["refX", "10"], ["refY", "5"], ["markerWidth", "7"], ["markerHeight", "7"], ["orient", "auto"]]) marker.setAttribute(a, v);
    const tip = document.createElementNS(ns, "path");
    tip.setAttribute("d", "M0,0 L10,5 L0,10 z");
    tip.setAttribute("fill", "#b00020");
    marker.append(tip);
    defs.append(marker);
    svg.append(defs);
    const at = (i) => [c + rad * Math.cos(2 * Math.PI * i / names.length - Math.PI / 2), c + rad * Math.sin(2 * Math.PI * i / names.length - Math.PI / 2)];
    for (const e of edges) {
      const [x1, y1] = at(names.indexOf(e.waiter)), [x2, y2] = at(names.indexOf(e.holder));
      const len = Math.hypot(x2 - x1, y2 - y1) || 1, ux = (x2 - x1) / len, uy = (y2 - y1) / len;
      const line = document.createElementNS(ns, "line");
      for (const [a, v] of [["x1", x1 + 30 * ux], ["y1", y1 + 14 * uy], ["x2", x2 - 30 * ux], ["y2", y2 - 14 * uy]]) line.setAttribute(a, String(v));
      line.setAttribute("stroke", "#b00020");
      line.setAttribute("marker-end", "url(#arrow)");
      svg.append(line);
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", String((x1 + x2) / 2 + 8 * uy));
      label.setAttribute("y", String((y1 + y2) / 2 - 8 * ux));
      label.setAttribute("text-anchor", "middle");
      label.textContent = e.for;
      svg.append(label);
    }
    names.forEach((n, i) => {
      const [x, y] = at(i);
      const box = document.createElementNS(ns, "ellipse");
      for (const [a, v] of [["cx", x], ["cy", y], ["rx", 30], ["ry", 14]]) box.setAttribute(a, String(v));
      box.setAttribute("fill", "#fff");
      box.setAttribute("stroke", "#1d1d1f");
      svg.append(box);
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", String(x));
      label.setAttribute("y", String(y + 4));
      label.setAttribute("text-anchor", "middle");
      label.textContent = n;
      svg.append(label);
    });
    const s = el("section", "wait-graph");
    s.append(el("h2", "", t.wait_cycle ? "The wait-for cycle at the end" : "Who waits for whom at the end"));
    s.append(svg);
    return s;
  }

  document.addEventListener("keydown", (ev) => {
    const t = current >= 0 && doc.results[current].trace;
    if (!t || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const to = { ArrowRight: step + 1, ArrowLeft: step - 1, Home: 0, End: t.steps.length }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    keyed = true;
    select(to);
  });

  document.getElementById("counts").textContent = doc.summary.models + " model" + (doc.summary.models === 1 ? "" : "s")
    + ", " + doc.summary.met + " as expected, exit code " + doc.summary.exit_code;
  doc.results.forEach((r, i) => {
    const b = el("button", r.met ? "met" : "unmet", (r.met ? "✓ " : "✗ ") + r.file);
    b.title = r.summary || "";
    b.addEventListener("click", () => showResult(i));
    nav.append(b);
  });
  if (doc.results.length < 2) nav.hidden = true;
  const first = doc.results.findIndex((r) => r.trace);
  if (doc.results.length) showResult(first < 0 ? 0 : first);
})();
