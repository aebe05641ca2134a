"use strict";
// The halluscope viewer. Every piece of run data goes through textContent (el() below): a reply holding HTML stays
// text. Served mode (http:): the token comes once in the URL fragment (#token=...), lives in sessionStorage and
// travels only in the X-Halluscope-Token header; data comes from /api/index and /api/chunk/N, clips are fetched
// with the header and played from blob URLs. Export mode (file:): the same data as data/index.js and
// data/chunk-N.js, loaded as scripts (file:// allows no fetch), clips from audio/ beside the page.
// The view state (filters, page, open item) lives in the fragment, so every view is a permalink.
(function () {
  const HEADER = "X-Halluscope-Token";
  const TOKEN_KEY = "halluscope-view-token";
  const FILE = location.protocol === "file:";
  const FILTERS = ["kind", "lang", "label", "type", "severity", "split", "run", "outcome", "status", "model", "quality"];
  const state = { meta: null, index: [], pos: new Map(), chunks: new Map(), searched: null, searchKey: "",
                  blobs: new Map() };
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) { continue; }
      if (k === "class") { e.className = v; } else if (k.startsWith("on")) { e.addEventListener(k.slice(2), v); }
      else { e.setAttribute(k, v === true ? "" : String(v)); }
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) { continue; }
      e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  const say = (t) => { $("message").textContent = t; };
  const fmt = (x, d) => (x === null || x === undefined ? "-" : (typeof x === "number" ? x.toFixed(d === undefined ? 3 : d) : String(x)));

  // ---- transport ------------------------------------------------------------------------------------------
  function takeToken() {  // #token=... -> sessionStorage; the rest of the fragment stays (a permalink)
    const h = new URLSearchParams(location.hash.slice(1));
    const t = h.get("token");
    if (!t) { return; }
    sessionStorage.setItem(TOKEN_KEY, t);
    h.delete("token");
    history.replaceState(null, "", location.pathname + location.search + (h.toString() ? "#" + h.toString() : ""));
  }
  function api(url, opts) {
    const o = opts || {};
    const headers = Object.assign({}, o.headers || {});
    headers[HEADER] = sessionStorage.getItem(TOKEN_KEY) || "";
    return fetch(url, Object.assign({}, o, { headers: headers, credentials: "omit", cache: "no-store" }));
  }
  async function getJSON(url) {
    const r = await api(url);
    const data = await r.json().catch(() => ({}));
    if (!r.ok) { throw new Error(data.error || ("HTTP " + r.status)); }
    return data;
  }
  const pending = new Map();  // export mode: script name -> resolver
  window.HALLUSCOPE = {
    index: (d) => { const p = pending.get("index"); if (p) { p(d); } },
    chunk: (d) => { const p = pending.get("chunk-" + d.chunk); if (p) { p(d); } },
  };
  function script(name, file) {
    return new Promise((resolve, reject) => {
      pending.set(name, resolve);
      const s = el("script", { src: file });
      s.onerror = () => reject(new Error("cannot load " + file + " (is the export folder complete?)"));
      document.head.appendChild(s);
    });
  }
  function loadIndex() { return FILE ? script("index", "data/index.js") : getJSON("/api/index"); }
  async function chunk(n) {
    if (!state.chunks.has(n)) {
      const p = FILE ? script("chunk-" + n, "data/chunk-" + String(n).padStart(5, "0") + ".js")
                     : getJSON("/api/chunk/" + n);
      state.chunks.set(n, p.then((d) => d.items));
      p.catch(() => state.chunks.delete(n));
    }
    return state.chunks.get(n);
  }
  async function detail(id) {
    const n = Math.floor(state.pos.get(id) / state.meta.page);
    return (await chunk(n))[id];
  }
  async function audioSrc(src) {  // served: fetched with the token, played from a blob URL
    if (FILE) { return src; }
    if (!state.blobs.has(src)) {
      const r = await api(src);
      if (!r.ok) { const d = await r.json().catch(() => ({})); throw new Error(d.error || ("HTTP " + r.status)); }
      state.blobs.set(src, URL.createObjectURL(await r.blob()));
    }
    return state.blobs.get(src);
  }

  // ---- view state in the fragment ------------------------------------------------------------------------
  function params() { return new URLSearchParams(location.hash.slice(1)); }
  function go(p) { location.hash = p.toString(); }
  function setParam(k, v) { const p = params(); if (v) { p.set(k, v); } else { p.delete(k); } if (k !== "page") { p.delete("page"); } go(p); }

  function valueOf(row, key) {
    if (key === "label") { return row.label === null || row.label === undefined ? "" : (row.label ? "hallucinated" : "original"); }
    if (key === "quality") { return row.q || (row.kind === "spoken" && row.audio ? "unrated" : ""); }
    const v = row[key];
    return v === null || v === undefined ? "" : String(v);
  }
  function matches(row, p) {
    for (const key of ["kind", "lang", "label", "type", "severity", "split", "quality"]) {
      const want = p.get(key);
      if (want && valueOf(row, key) !== want) { return false; }
    }
    const run = p.get("run"), outcome = p.get("outcome"), status = p.get("status"), model = p.get("model");
    if (run && !(run in row.outcome)) { return false; }
    if (outcome && !(run ? row.outcome[run] === outcome : Object.values(row.outcome).includes(outcome))) { return false; }
    if (status && !(run ? row.status[run] === status : Object.values(row.status).includes(status))) { return false; }
    if (model && !row.models.includes(model)) { return false; }
    return true;
  }
  async function searchIds(q) {
    if (!q) { return null; }
    if (state.searchKey === q) { return state.searched; }
    let ids;
    if (FILE) {  // no server: ids and the first words of each text
      const words = q.toLowerCase().split(/\s+/).filter(Boolean);
      ids = state.index.filter((r) => words.every((w) => (r.id + " " + r.title).toLowerCase().includes(w))).map((r) => r.id);
    } else {
      ids = (await getJSON("/api/search?q=" + encodeURIComponent(q))).ids;
    }
    state.searchKey = q;
    state.searched = new Set(ids);
    return state.searched;
  }

  // ---- the list --------------------------------------------------------------------------------------------
  function facets() {
    const add = (sel, values, label) => {
      for (const v of [...values].sort()) { sel.appendChild(el("option", { value: v }, label ? label(v) : v)); }
    };
    for (const key of ["kind", "lang", "label", "type", "severity", "split", "quality"]) {
      add($("f-" + key), new Set(state.index.map((r) => valueOf(r, key)).filter(Boolean)));
    }
    const runs = new Map(state.meta.runs.map((r) => [r.key, r]));
    add($("f-run"), runs.keys(), (k) => { const r = runs.get(k); return r.detector + " / " + r.task + " / " + r.input; });
    add($("f-outcome"), new Set(state.index.flatMap((r) => Object.values(r.outcome))));
    add($("f-status"), new Set(state.index.flatMap((r) => Object.values(r.status))));
    add($("f-model"), new Set(state.index.flatMap((r) => r.models)));
  }

  async function render() {
    const p = params();
    for (const key of FILTERS) { $("f-" + key).value = p.get(key) || ""; }
    $("f-q").value = p.get("q") || "";
    const item = p.get("item");
    $("list").hidden = !!item;
    $("filters").hidden = !!item;
    $("item").hidden = !item;
    document.body.dataset.ready = "0";
    try {
      if (item) { await renderItem(item); } else { await renderList(p); }
      say("");
    } catch (e) {
      say(String(e.message || e));
    }
    document.body.dataset.ready = "1";
  }

  async function renderList(p) {
    const found = await searchIds(p.get("q"));
    const rows = state.index.filter((r) => matches(r, p) && (!found || found.has(r.id)));
    const size = state.meta.page;
    const pages = Math.max(1, Math.ceil(rows.length / size));
    const page = Math.min(Math.max(1, parseInt(p.get("page") || "1", 10) || 1), pages);
    $("pos").textContent = "page " + page + " / " + pages + " (" + rows.length + " of " + state.index.length + " items)";
    $("pos").dataset.total = String(rows.length);
    $("prev").disabled = page <= 1;
    $("next").disabled = page >= pages;
    $("prev").dataset.page = String(page - 1);
    $("next").dataset.page = String(page + 1);
    const body = $("rows").tBodies[0];
    body.replaceChildren(...rows.slice((page - 1) * size, page * size).map((r) => {
      const link = new URLSearchParams(p);
      link.set("item", r.id);
      const outs = Object.entries(r.outcome);
      const right = outs.filter(([, o]) => o === "correct").length;
      return el("tr", { "data-id": r.id },
        el("td", {}, el("a", { href: "#" + link.toString(), class: "open" }, r.id)),
        el("td", {}, r.lang || r.domain || ""),
        el("td", {}, r.kind === "spoken" ? (r.label ? (r.type || "hallucinated") : "original") : (r.type || "")),
        el("td", {}, r.severity || ""), el("td", {}, r.split || ""), el("td", {}, fmt(r.wer, 2)),
        el("td", {}, outs.length ? right + " / " + outs.length + " right" : ""),
        el("td", {}, r.q || ""), el("td", { class: "text" }, r.title));
    }));
  }

  // ---- one item --------------------------------------------------------------------------------------------
  function table(head, rows) {
    return el("table", {}, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))));
  }
  function raw(text, label) {
    if (text === null || text === undefined) { return "-"; }
    return el("details", {}, el("summary", {}, label || "raw reply"), el("pre", { class: "raw" }, text));
  }
  function outcome(o) { return el("span", { class: o }, o === "correct" ? "right" : (o === "wrong" ? "wrong" : "no label")); }

  function marked(segments, cls) {
    return segments.map(([text, i]) => (i === null ? text
      : el("mark", { class: "edit " + cls, "data-edit": i, title: "edit " + (i + 1) }, text)));
  }

  async function audioBlock(info, extra) {
    const audio = el("audio", { controls: true, preload: "metadata", class: "clip" });
    const box = el("div", { class: "audio" }, audio, el("p", { class: "meta" }, extra));
    try {
      audio.src = await audioSrc(info.src);
      box.dataset.audio = "ok";
    } catch (e) {
      box.dataset.audio = "error";
      box.appendChild(el("p", { class: "wrong" }, "clip not available: " + (e.message || e)));
    }
    return box;
  }

  function alignmentBlock(t) {
    const a = t.alignment;
    if (!a) { return el("p", { class: "none" }, "empty reference after normalisation: no alignment"); }
    const words = [];
    for (const c of a.chunks) {
      if (c.op === "equal") { c.ref.forEach((w) => words.push(el("span", { class: "equal", "data-op": "equal" }, w))); }
      else if (c.op === "substitute") {
        c.ref.forEach((w, i) => words.push(el("span", { class: "substitute", "data-op": "substitute", title: w + " -> " + c.hyp[i] },
          el("span", { class: "ref" }, w), el("span", { class: "hyp" }, c.hyp[i]))));
      } else if (c.op === "delete") { c.ref.forEach((w) => words.push(el("span", { class: "delete", "data-op": "delete", title: "deleted" }, w))); }
      else { c.hyp.forEach((w) => words.push(el("span", { class: "insert", "data-op": "insert", title: "inserted" }, w))); }
      words.push(" ");
    }
    return el("div", {},
      el("p", { class: "legend" }, el("span", { class: "substitute" }, "S substituted"), el("span", { class: "delete" }, "D deleted"),
        el("span", { class: "insert" }, "I inserted"),
        "S " + a.substitutions + ", D " + a.deletions + ", I " + a.insertions + ", hits " + a.hits +
        "; item WER " + fmt(t.wer) + ", CER " + fmt(t.cer) + " (" + t.asr + ")"),
      el("div", { class: "align" }, words));
  }

  function qualityBlock(d) {
    const rows = d.quality.map((q) => [q.annotator, q.intelligibility, q.fidelity, q.excluded ? "excluded" : "kept", q.note]);
    const box = el("section", { class: "quality" }, el("h2", {}, "Speech quality (Lost in Speech section 3.4)"),
      rows.length ? table(["annotator", "intelligibility", "fidelity to text", "exclusion", "note"], rows)
        : el("p", { class: "none" }, "not rated yet"));
    if (!state.meta.writable) { box.appendChild(el("p", { class: "none" }, "rate clips in 'halluscope view RUN' (the export is read-only)")); return box; }
    const sel = (name, values) => el("select", { name: name }, values.map((v) => el("option", { value: v }, v)));
    const intel = sel("intelligibility", ["fully", "mostly", "poorly", "unintelligible"]);
    const fid = sel("fidelity", ["faithful", "minor", "major"]);
    const excl = el("input", { type: "checkbox", name: "excluded" });
    const note = el("input", { name: "note", placeholder: "note", maxlength: 2000 });
    const status = el("span", { class: "saved" });
    const save = async () => {
      const who = $("annotator").value.trim();
      if (!who) { status.textContent = "enter your name (Annotator, top right) first"; return; }
      const id = crypto.randomUUID ? crypto.randomUUID().replace(/-/g, "") : String(Date.now()) + Math.random().toString(36).slice(2);
      const body = JSON.stringify({ save_id: id, item_id: d.id, annotator: who, intelligibility: intel.value,
                                    fidelity: fid.value, excluded: excl.checked, note: note.value });
      // a refusal the server read (4xx) is final; a busy store (503), another 5xx or no answer is retried with the
      // same save id (the server stores it once), waiting 1, 2, 4 ... up to 30 s between tries
      for (let attempt = 0, wait = 1000; ; attempt++, wait = Math.min(wait * 2, 30000)) {
        status.textContent = attempt ? "saving... (try " + (attempt + 1) + ")" : "saving...";
        let r = null, res = {};
        try {
          r = await api("/api/quality", { method: "POST", headers: { "Content-Type": "application/json" }, body: body });
          res = await r.json().catch(() => ({}));
        } catch (e) { res = { error: "no answer from the server (" + (e.message || e) + ")" }; }
        if (r && r.ok) {
          status.textContent = "saved: " + res.stored.intelligibility + ", " + res.stored.fidelity + (res.stored.excluded ? ", excluded" : "");
          state.chunks.clear();
          const row = state.index[state.pos.get(d.id)];
          row.q = res.stored.excluded || row.q === "excluded" ? "excluded" : "rated";
          return;
        }
        const why = res.error || ("HTTP " + (r ? r.status : "?"));
        if (r && r.status < 500) { status.textContent = "not saved: " + why; return; }
        status.textContent = "NOT saved yet: " + why + "; retrying in " + Math.round(wait / 1000) + " s";
        await new Promise((done) => setTimeout(done, wait));
      }
    };
    localStorage.setItem("halluscope-view-annotator", $("annotator").value);
    box.appendChild(el("div", { class: "quality-form" }, el("label", {}, "intelligibility ", intel),
      el("label", {}, "fidelity ", fid), el("label", {}, excl, " exclude (audio quality)"), note,
      el("button", { type: "button", class: "save-quality", onclick: save }, "save rating"), status));
    return box;
  }

  async function spoken(d) {
    const out = [el("p", { class: "meta" }, d.language + " | " + (d.label ? d.type + " / " + d.severity : "original") +
      " | article " + d.article_id + " | generator " + d.generator +
      (Object.keys(d.checks).length ? " | checks: " + Object.entries(d.checks).map(([k, v]) => k + "=" + v).join(", ") : ""))];
    if (d.label) {
      out.push(el("div", { class: "cols" }, el("div", { class: "original" }, el("h3", {}, "Original"), marked(d.original, "before")),
        el("div", { class: "rewrite" }, el("h3", {}, "Rewrite"), marked(d.rewrite, "after"))));
      out.push(el("h2", {}, "Edits"), d.edits.length ? table(["#", "kind", "before", "after", "sentence", "located"],
        d.edits.map((e, i) => [String(i + 1), e.kind, e.before, e.after, String(e.sentence), e.located ? "yes" : "not found in the text"]))
        : el("p", { class: "none" }, "no edit recorded (LLM rewrites record none)"));
    } else {
      out.push(el("div", { class: "cols" }, el("div", { class: "original" }, el("h3", {}, "Text (original)"), d.text)));
    }
    if (d.self_assessment) {
      const sa = d.self_assessment;
      out.push(el("h2", {}, "Generator self-assessment"), table(["dimension", "rating", "as written"],
        Object.keys(sa.ratings).map((k) => [k, String(sa.ratings[k]), sa.verbal[k] || ""])),
        sa.unrated.length ? el("p", { class: "none" }, "unrated: " + sa.unrated.join(", ")) : null);
    }
    if (d.judges.length) {
      const dims = [...new Set(d.judges.flatMap((j) => Object.keys(j.scores)))];
      out.push(el("h2", {}, "Judges"), table(["judge", "status", ...dims, "reason", "raw"],
        d.judges.map((j) => [j.judge, j.status, ...dims.map((k) => fmt(j.scores[k])), j.reason || "", raw(j.raw)])));
    }
    out.push(el("h2", {}, "Audio"));
    out.push(d.audio ? await audioBlock(d.audio, "voice " + d.audio.voice + ", " + fmt(d.audio.duration_s, 1) + " s, " + d.audio.engine)
      : el("p", { class: "none" }, "no clip (synthesis failed or not run)"));
    out.push(el("h2", {}, "Transcript"));
    out.push(d.transcript ? el("div", { class: "transcript" }, el("p", { class: "asr-text" }, d.transcript.text), alignmentBlock(d.transcript))
      : el("p", { class: "none" }, "no transcript"));
    out.push(el("h2", {}, "Detectors"));
    out.push(d.predictions.length ? table(["detector", "task", "input", "split", "gold", "predicted", "parse status", "outcome", "reason", "raw reply"],
      d.predictions.map((p) => [p.detector, p.task, p.input, p.split, p.gold, p.predicted || "-", p.status, outcome(p.outcome),
        p.reason || "", raw(p.raw)])) : el("p", { class: "none" }, "no detector has run on this item"));
    if (d.audio) { out.push(qualityBlock(d)); }
    return out;
  }

  async function mishap(d) {
    const out = [el("p", { class: "meta" }, d.domain + " | " + d.category + " | strategy " + d.strategy +
      (d.invented_source ? " | invented source: " + d.invented_source : ""))];
    out.push(el("h2", {}, "Question"), el("p", { class: "question" }, d.question));
    if (d.clip) {
      out.push(el("h2", {}, "Clip"), await audioBlock(d.clip, d.clip.id + ", " + d.clip.source + ", " + fmt(d.clip.duration_s, 1) + " s"),
        el("h3", {}, "Description (" + d.clip.description_kind + ")"), el("p", { class: "description" }, d.clip.description));
    }
    out.push(el("h2", {}, "Rubric" + (d.rubric_version ? " (v" + d.rubric_version + ")" : "")), el("p", { class: "rubric" }, d.rubric || "no rubric yet"));
    out.push(el("h2", {}, "Answers"));
    for (const a of d.answers) {
      out.push(el("div", { class: "card answer" },
        el("p", { class: "meta" }, a.model + " | " + a.decoding + " | " + a.status + (a.error ? " (" + a.error + ")" : "")),
        el("pre", { class: "response" }, a.text || ""),
        el("p", {}, "verdict: ", el("span", { class: a.verdict === "hallucinated" ? "wrong" : "correct" }, a.verdict || "not judged"),
          " | stance: " + (a.stance || "-") + (a.judge ? " | judge " + a.judge + " (" + a.judge_status + ")" : "") +
          (a.judge_reason ? " | " + a.judge_reason : "")),
        a.evidence.length ? table(["evidence query", "documents"], a.evidence.map((s) => [s.query, s.results.join(", ")])) : null,
        a.human.length ? table(["annotator", "human label", "note"], a.human.map((h) => [h.annotator, h.label, h.note])) : null,
        raw(a.judge_raw, "judge's raw reply")));
    }
    if (!d.answers.length) { out.push(el("p", { class: "none" }, "no answers yet")); }
    return out;
  }

  function closedform(d) {
    return [el("p", { class: "meta" }, d.benchmark + " | " + d.group + " | " + d.subset + " | " + d.kind + (d.run ? " | run " + d.run : "")),
      el("h2", {}, "Question"), el("p", { class: "question" }, d.question || "-"),
      el("h2", {}, "Reference"), el("p", {}, d.reference),
      el("h2", {}, "Reply"), el("pre", { class: "response" }, d.reply),
      table(["reading", "answer read", "correct", "why"], [
        ["strict", d.strict, outcome(d.strict_correct ? "correct" : "wrong"), d.strict_reason + (d.hedged ? " (hedged)" : "") + (d.via ? " via " + d.via : "")],
        ["compat", d.compat, d.compat_scored ? outcome(d.compat_correct ? "correct" : "wrong") : "skipped by the official scorer", d.compat_rule]]),
      el("p", { class: d.differs ? "wrong" : "none" }, d.differs ? "The modes differ: " + d.why + (d.misfire ? " (" + d.misfire + ")" : "") : "Both modes agree.")];
  }

  async function renderItem(id) {
    if (!state.pos.has(id)) { throw new Error("no item " + id + " in this run"); }
    const d = await detail(id);
    const back = params();
    back.delete("item");
    const i = state.pos.get(id);
    const nav = (j, label) => {
      if (j < 0 || j >= state.index.length) { return null; }
      const p = params(); p.set("item", state.index[j].id);
      return el("a", { href: "#" + p.toString(), class: "step" }, label);
    };
    const body = d.kind === "spoken" ? await spoken(d) : (d.kind === "mishap" ? await mishap(d) : closedform(d));
    $("item").replaceChildren(el("a", { href: "#" + back.toString(), class: "back" }, "\u2190 list"), " ",
      nav(i - 1, "\u2190 previous"), " ", nav(i + 1, "next \u2192"),
      el("h1", { class: "item-id" }, d.id), ...body);
    $("item").dataset.id = d.id;
  }

  // ---- start -----------------------------------------------------------------------------------------------
  async function start() {
    if (!FILE) { takeToken(); }
    $("who").hidden = FILE;
    $("annotator").value = localStorage.getItem("halluscope-view-annotator") || "";
    $("annotator").addEventListener("change", () => localStorage.setItem("halluscope-view-annotator", $("annotator").value.trim()));
    try {
      const d = await loadIndex();
      state.meta = d.meta;
      state.index = d.rows.map((r) => Object.fromEntries(d.columns.map((c, i) => [c, r[i]])));  // wire_index's columns
      state.index.forEach((r, i) => state.pos.set(r.id, i));
    } catch (e) {
      say(String(e.message || e));
      document.body.dataset.ready = "1";
      return;
    }
    $("run").textContent = state.meta.run + " (" + state.meta.n + " items)";
    staleList(state.meta.stale || []);
    facets();
    for (const key of FILTERS) { $("f-" + key).addEventListener("change", (e) => setParam(key, e.target.value)); }
    $("f-q").addEventListener("change", (e) => setParam("q", e.target.value.trim()));
    $("clear").addEventListener("click", () => go(new URLSearchParams()));
    $("prev").addEventListener("click", (e) => setParam("page", e.target.dataset.page));
    $("next").addEventListener("click", (e) => setParam("page", e.target.dataset.page));
    window.addEventListener("hashchange", render);
    await render();
  }
  // results the report leaves out (core/provenance.py): each with why and the command that refreshes it
  function staleList(rows) {
    if (!rows.length) return;
    const box = el("details", { id: "stale", class: "stale" },
      el("summary", {}, rows.length + " stale result(s), not shown: refresh with the commands below"),
      el("ul", {}, ...rows.map((r) => el("li", {}, r.table + ": " + r.record + " (" + r.kind + ": " + r.why + ") ",
        el("code", {}, r.command)))));
    $("message").before(box);
  }
  document.addEventListener("DOMContentLoaded", start);
})();
