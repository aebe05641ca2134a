"use strict";
// Every piece of benchmark or model text goes through textContent: a response containing HTML stays text.
// The token comes once in the URL fragment (#token=...), lives in this origin's sessionStorage and travels only in
// the X-Halluscope-Token header: no cookie, so no other local server ever receives it.
// A label is queued in localStorage (per run) before it is sent and leaves the queue only when the server
// acknowledges its save_id; failures are shown and retried with backoff, so no label is dropped silently.
(function () {
  const HEADER = "X-Halluscope-Token";
  const TOKEN_KEY = "halluscope-mishap-token";
  const RETRY_MS = [500, 1000, 2000, 4000, 8000];  // backoff between retries of a failed save, then every 8 s
  const PERMANENT = new Set([400, 409, 413, 415]);  // the server read the label and refused it: retrying cannot help
  const state = { items: [], labels: {}, pos: 0, runId: null, maxNote: 2000, flushing: false, failures: 0,
                  timer: null, retryAt: 0, error: "", clips: new Map() };
  const $ = (id) => document.getElementById(id);
  const FILTERS = ["domain", "category", "strategy", "model"];

  function annotator() { return $("annotator").value.trim(); }
  function mode() { return $("mode").value; }
  function say(text) { $("message").textContent = text; }

  function takeToken() {  // #token=... -> sessionStorage, and out of the address bar and history
    const t = new URLSearchParams(location.hash.slice(1)).get("token");
    if (!t) { return false; }
    sessionStorage.setItem(TOKEN_KEY, t);
    history.replaceState(null, "", location.pathname + location.search);
    return true;
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

  // ---- the save queue -------------------------------------------------------------------------------------
  function qkey() { return "halluscope-mishap-queue:" + state.runId; }
  function readQueue() {
    const raw = localStorage.getItem(qkey());
    if (!raw) { return []; }
    try { return JSON.parse(raw); } catch (e) {  // never drop unreadable labels: set them aside, visibly
      localStorage.setItem(qkey() + ":unreadable:" + Date.now(), raw);
      say("A saved queue of labels could not be read; it was kept in localStorage under " + qkey() + ":unreadable.");
      return [];
    }
  }
  function changeQueue(fn) { const q = readQueue(); fn(q); localStorage.setItem(qkey(), JSON.stringify(q)); return q; }
  function newId() {
    if (crypto.randomUUID) { return crypto.randomUUID(); }
    return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  }
  function payload(e) {
    return { save_id: e.save_id, answer_id: e.answer_id, annotator: e.annotator, label: e.label, note: e.note,
             mode: e.mode };
  }

  function schedule() {
    clearTimeout(state.timer);
    const wait = RETRY_MS[Math.min(state.failures - 1, RETRY_MS.length - 1)];
    state.retryAt = Date.now() + wait;
    state.timer = setTimeout(flush, wait);
  }

  async function flush() {
    if (state.flushing || !state.runId) { return; }
    state.flushing = true;
    clearTimeout(state.timer);
    state.timer = null;
    showStatus();
    try {
      for (;;) {
        const e = readQueue().find((x) => !x.rejected);
        if (!e) { state.failures = 0; state.error = ""; break; }
        let r;
        let data = {};
        try {
          r = await api("/api/label", { method: "POST", headers: { "Content-Type": "application/json" },
                                        body: JSON.stringify(payload(e)) });
          data = await r.json().catch(() => ({}));
        } catch (err) {
          fail("the server cannot be reached (" + err.message + ")");
          break;
        }
        if (r.ok) {
          changeQueue((q) => { const i = q.findIndex((x) => x.save_id === e.save_id); if (i >= 0) { q.splice(i, 1); } });
          if (e.annotator === annotator()) { state.labels[e.answer_id] = { label: e.label, note: e.note }; }
          state.failures = 0;
          state.error = "";
          refreshCards();
          continue;
        }
        const why = data.error || ("HTTP " + r.status);
        if (PERMANENT.has(r.status)) {
          changeQueue((q) => { const x = q.find((y) => y.save_id === e.save_id); if (x) { x.rejected = why; } });
          refreshCards();
          continue;
        }
        fail(r.status === 403
          ? "the server refused the token (" + why + "). If it was restarted, open the new link it printed; "
            + "your labels are kept and will be sent"
          : "the server answered " + r.status + " (" + why + ")");
        break;
      }
    } finally {
      state.flushing = false;
      showStatus();
    }
  }

  function fail(why) {
    state.failures += 1;
    state.error = why;
    changeQueue((q) => { for (const x of q) { if (!x.rejected) { x.error = why; } } });
    schedule();
    refreshCards();
  }

  function showStatus() {
    const q = state.runId ? readQueue() : [];
    const pending = q.filter((x) => !x.rejected);
    const rejected = q.filter((x) => x.rejected);
    const box = $("save-status");
    box.replaceChildren();
    const parts = [];
    if (pending.length && state.error) {
      const secs = Math.max(0, Math.round((state.retryAt - Date.now()) / 1000));
      parts.push(pending.length + " label(s) NOT saved yet: " + state.error + ". Retrying"
                 + (secs ? " in " + secs + " s" : "") + ".");
    } else if (pending.length) {
      parts.push("Saving " + pending.length + " label(s)...");
    }
    if (rejected.length) {
      parts.push(rejected.length + " label(s) refused by the server: " + rejected[0].rejected + ".");
    }
    const text = document.createElement("span");
    text.textContent = parts.join(" ");
    box.appendChild(text);
    if (pending.length && state.error) { box.appendChild(button("Retry now", () => { state.failures = 0; flush(); })); }
    if (rejected.length) {
      box.appendChild(button("Discard refused labels", () => {
        changeQueue((q2) => { for (let i = q2.length - 1; i >= 0; i--) { if (q2[i].rejected) { q2.splice(i, 1); } } });
        showStatus();
        refreshCards();
      }));
    }
    box.className = rejected.length || state.error ? "failed" : (pending.length ? "pending" : "");
    document.body.dataset.pending = String(pending.length);
    document.body.dataset.rejected = String(rejected.length);
  }

  function button(text, fn) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.addEventListener("click", fn);
    return b;
  }

  // ---- items, pages and cards -----------------------------------------------------------------------------
  function filtered() {
    const only = $("f-unlabelled").checked;
    return state.items.filter((it) => FILTERS.every((f) => !$("f-" + f).value || it[f] === $("f-" + f).value)
      && (!only || !state.labels[it.id]));
  }

  // independent: one response per page; side by side: every response to the same question on one page
  function pages() {
    const items = filtered();
    if (mode() === "independent") { return items.map((it) => [it]); }
    const groups = new Map();
    for (const it of items) {
      if (!groups.has(it.question_id)) { groups.set(it.question_id, []); }
      groups.get(it.question_id).push(it);
    }
    return Array.from(groups.values());
  }

  function fillFilters() {
    for (const f of FILTERS) {
      const sel = $("f-" + f);
      const values = Array.from(new Set(state.items.map((it) => it[f]))).sort();
      for (const v of values) {
        const opt = document.createElement("option");
        opt.value = v;
        opt.textContent = v;
        sel.appendChild(opt);
      }
    }
  }

  function render() {
    const all = pages();
    if (state.pos >= all.length) { state.pos = Math.max(0, all.length - 1); }
    $("pos").textContent = (all.length ? state.pos + 1 : 0) + " / " + all.length;
    const cards = $("cards");
    cards.replaceChildren();
    if (!all.length) { say("No response matches the filters."); return; }
    const shown = new Set(all[state.pos].map((it) => it.clip_id));
    for (const [id, url] of state.clips) {  // free the clips no longer on the page
      if (!shown.has(id)) { url.then((u) => u && URL.revokeObjectURL(u)); state.clips.delete(id); }
    }
    for (const it of all[state.pos]) { cards.appendChild(card(it)); }
  }

  function clipUrl(clipId) {  // <audio src> cannot send the header: fetch the clip, play it from a blob URL
    if (!state.clips.has(clipId)) {
      state.clips.set(clipId, api("/audio/" + encodeURIComponent(clipId)).then(async (r) => {
        if (!r.ok) {
          const data = await r.json().catch(() => ({}));
          state.clips.delete(clipId);
          throw new Error(data.error || ("HTTP " + r.status));
        }
        return URL.createObjectURL(await r.blob());
      }));
    }
    return state.clips.get(clipId);
  }

  function card(it) {
    const node = $("card").content.firstElementChild.cloneNode(true);
    node.dataset.id = it.id;
    node.querySelector(".meta").textContent = [it.model, it.domain, it.category, it.strategy].join(" · ");
    node.querySelector(".question").textContent = it.question;
    node.querySelector(".response").textContent = it.response;
    node.querySelector(".description").textContent = it.description;
    node.querySelector(".rubric").textContent = it.rubric || "(no rubric)";
    const audio = node.querySelector(".audio");
    clipUrl(it.clip_id).then((u) => { audio.src = u; node.dataset.audio = "ok"; }, (e) => {
      node.querySelector(".audio-error").textContent = "audio not available: " + e.message;
      node.dataset.audio = "error";
    });
    const saved = state.labels[it.id];
    node.querySelector(".note").value = saved ? saved.note : "";
    node.querySelector(".label-grounded").addEventListener("click", () => label(it, "grounded", node));
    node.querySelector(".label-hallucinated").addEventListener("click", () => label(it, "hallucinated", node));
    cardStatus(node);
    return node;
  }

  function cardStatus(node) {  // the latest queued label of this annotator, else the stored one
    const id = node.dataset.id;
    const q = state.runId ? readQueue().filter((x) => x.answer_id === id && x.annotator === annotator()) : [];
    const e = q[q.length - 1];
    const span = node.querySelector(".saved-label");
    const saved = state.labels[id];
    if (e && e.rejected) {
      span.textContent = "NOT saved (" + e.label + "): refused: " + e.rejected;
      span.className = "saved-label failed";
    } else if (e && e.error) {
      span.textContent = "NOT saved yet (" + e.label + "): " + e.error + "; retrying";
      span.className = "saved-label failed";
    } else if (e) {
      span.textContent = "saving: " + e.label + "...";
      span.className = "saved-label pending";
    } else {
      span.textContent = saved ? "saved: " + saved.label : "";
      span.className = "saved-label";
    }
  }

  function refreshCards() {
    for (const node of document.querySelectorAll("#cards .card")) { cardStatus(node); }
    showStatus();
  }

  function label(it, value, node) {
    if (!annotator()) { say("Enter your annotator name first."); $("annotator").focus(); return; }
    const note = node.querySelector(".note").value;
    const chars = Array.from(note).length;
    if (chars > state.maxNote) {
      say("The note has " + chars + " characters; at most " + state.maxNote + " are stored. Shorten it and label again.");
      return;
    }
    const entry = { save_id: newId(), answer_id: it.id, annotator: annotator(), label: value, note: note, mode: mode(),
                    queued: Date.now() };
    changeQueue((q) => q.push(entry));
    say("");
    refreshCards();
    flush();
  }

  async function loadLabels() {
    state.labels = {};
    if (annotator()) {
      try {
        state.labels = (await getJSON("/api/labels?annotator=" + encodeURIComponent(annotator()))).labels;
      } catch (e) { say("Could not load your saved labels (" + e.message + "); the labels you add are still queued."); }
    }
    render();
    document.body.dataset.annotator = annotator();  // labels of this annotator are loaded
  }

  let loadFailures = 0;
  async function load() {
    if (!sessionStorage.getItem(TOKEN_KEY)) {
      say("No access token: open the link printed by 'halluscope mishap annotate' (it ends in #token=...).");
      return;
    }
    let data;
    try {
      data = await getJSON("/api/items");
    } catch (e) {
      loadFailures += 1;
      const wait = RETRY_MS[Math.min(loadFailures - 1, RETRY_MS.length - 1)];
      say("Could not load items (" + e.message + "); retrying. If the server was restarted, open the new link it printed.");
      setTimeout(load, wait);
      return;
    }
    say("");
    state.items = data.items;
    state.runId = data.run_id;
    state.maxNote = data.max_note;
    fillFilters();
    await loadLabels();
    document.body.dataset.ready = "1";
    flush();  // labels queued in an earlier visit (or before a restart) go out now
  }

  function start() {
    takeToken();
    $("annotator").value = localStorage.getItem("mishap-annotator") || "";
    $("annotator").addEventListener("change", () => {
      localStorage.setItem("mishap-annotator", annotator()); loadLabels();
    });
    for (const id of ["mode", "f-domain", "f-category", "f-strategy", "f-model", "f-unlabelled"]) {
      $(id).addEventListener("change", () => { state.pos = 0; render(); });
    }
    $("prev").addEventListener("click", () => { state.pos = Math.max(0, state.pos - 1); render(); });
    $("next").addEventListener("click", () => { state.pos = Math.min(pages().length - 1, state.pos + 1); render(); });
    window.addEventListener("hashchange", () => {  // a new link pasted into this tab (the server was restarted)
      if (!takeToken()) { return; }
      if (state.runId) { state.failures = 0; flush(); loadLabels(); } else { loadFailures = 0; load(); }
    });
    window.addEventListener("online", () => { state.failures = 0; flush(); });
    window.addEventListener("storage", (ev) => { if (ev.key === qkey()) { refreshCards(); } });  // another tab
    setInterval(() => { if (state.error) { showStatus(); } }, 1000);  // the retry countdown
    load();
  }

  document.addEventListener("DOMContentLoaded", start);
})();
