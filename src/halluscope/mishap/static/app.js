"use strict";
// Every piece of benchmark or model text goes through textContent: a response containing HTML stays text.
(function () {
  const state = { items: [], labels: {}, pos: 0 };
  const $ = (id) => document.getElementById(id);
  const FILTERS = ["domain", "category", "strategy", "model"];

  function annotator() { return $("annotator").value.trim(); }
  function mode() { return $("mode").value; }
  function say(text) { $("message").textContent = text; }

  async function getJSON(url) {
    const r = await fetch(url, { credentials: "same-origin" });
    if (!r.ok) { throw new Error(url + ": " + r.status); }
    return r.json();
  }

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
    for (const it of all[state.pos]) { cards.appendChild(card(it)); }
  }

  function card(it) {
    const node = $("card").content.firstElementChild.cloneNode(true);
    node.dataset.id = it.id;
    node.querySelector(".meta").textContent = [it.model, it.domain, it.category, it.strategy].join(" · ");
    node.querySelector(".question").textContent = it.question;
    node.querySelector(".response").textContent = it.response;
    node.querySelector(".description").textContent = it.description;
    node.querySelector(".rubric").textContent = it.rubric || "(no rubric)";
    node.querySelector(".audio").src = "/audio/" + encodeURIComponent(it.clip_id);
    const saved = state.labels[it.id];
    node.querySelector(".saved-label").textContent = saved ? "saved: " + saved.label : "";
    node.querySelector(".note").value = saved ? saved.note : "";
    node.querySelector(".label-grounded").addEventListener("click", () => label(it, "grounded", node));
    node.querySelector(".label-hallucinated").addEventListener("click", () => label(it, "hallucinated", node));
    return node;
  }

  async function label(it, value, node) {
    if (!annotator()) { say("Enter your annotator name first."); $("annotator").focus(); return; }
    const body = { answer_id: it.id, annotator: annotator(), label: value, note: node.querySelector(".note").value,
                   mode: mode() };
    const r = await fetch("/api/label", { method: "POST", credentials: "same-origin",
                                          headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const data = await r.json();
    if (!r.ok) { say(data.error || "could not save"); return; }
    state.labels[it.id] = { label: value, note: body.note };
    node.querySelector(".saved-label").textContent = "saved: " + value;
    say("");
  }

  async function loadLabels() {
    state.labels = {};
    if (annotator()) {
      const data = await getJSON("/api/labels?annotator=" + encodeURIComponent(annotator()));
      state.labels = data.labels;
    }
    render();
    document.body.dataset.annotator = annotator();  // labels of this annotator are loaded
  }

  async function start() {
    try {
      state.items = (await getJSON("/api/items")).items;
    } catch (e) { say("Could not load items (" + e.message + "): open the link with the token."); return; }
    fillFilters();
    $("annotator").value = localStorage.getItem("mishap-annotator") || "";
    $("annotator").addEventListener("change", () => {
      localStorage.setItem("mishap-annotator", annotator()); loadLabels();
    });
    for (const id of ["mode", "f-domain", "f-category", "f-strategy", "f-model", "f-unlabelled"]) {
      $(id).addEventListener("change", () => { state.pos = 0; render(); });
    }
    $("prev").addEventListener("click", () => { state.pos = Math.max(0, state.pos - 1); render(); });
    $("next").addEventListener("click", () => { state.pos = Math.min(pages().length - 1, state.pos + 1); render(); });
    await loadLabels();
    document.body.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", start);
})();
