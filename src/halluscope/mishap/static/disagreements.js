"use strict";
// The annotation app's disagreements page: GET /api/disagreements (token-gated like every /api/ path) rendered per
// category. The token comes as on the main page: #token=... once, then this origin's sessionStorage, sent only in
// the X-Halluscope-Token header. Every piece of benchmark or model text goes through textContent.
(function () {
  const HEADER = "X-Halluscope-Token";
  const TOKEN_KEY = "halluscope-mishap-token";  // the key app.js stores it under
  const $ = (id) => document.getElementById(id);
  function say(text) { $("message").textContent = text; }

  function takeToken() {
    const t = new URLSearchParams(location.hash.slice(1)).get("token");
    if (t) {
      sessionStorage.setItem(TOKEN_KEY, t);
      history.replaceState(null, "", location.pathname + location.search);
    }
  }

  function cell(tr, text) { const td = document.createElement("td"); td.textContent = String(text); tr.appendChild(td); }

  function render(data) {
    const body = $("summary").querySelector("tbody");
    body.replaceChildren();
    for (const s of data.summary) {
      const tr = document.createElement("tr");
      for (const k of ["category", "annotated_labels", "disagreements", "judge_hallucinated", "judge_grounded"]) {
        cell(tr, s[k]);
      }
      body.appendChild(tr);
    }
    const main = $("categories");
    main.replaceChildren();
    for (const s of data.summary) {
      const rows = data.disagreements.filter((r) => r.category === s.category);
      const part = document.createElement("section");
      part.className = "category";
      part.dataset.category = s.category;
      const h = document.createElement("h2");
      h.textContent = s.category + " (" + rows.length + ")";
      part.appendChild(h);
      if (!rows.length) {
        const p = document.createElement("p");
        p.className = "empty";
        p.textContent = "no judge-human disagreement";
        part.appendChild(p);
      }
      for (const r of rows) {
        const card = $("row").content.firstElementChild.cloneNode(true);
        card.dataset.answer = r.answer_id;
        card.querySelector(".meta").textContent = r.strategy + " | " + r.answer_id;
        card.querySelector(".verdicts").textContent = "judge: " + r.judge + (r.judge_stance ? " (" + r.judge_stance + ")" : "")
          + " | humans: " + r.humans;
        for (const k of ["question", "response", "rubric", "description"]) { card.querySelector("." + k).textContent = r[k] || ""; }
        card.querySelector(".judge-reply").textContent = r.judge_reply || "";
        part.appendChild(card);
      }
      main.appendChild(part);
    }
  }

  async function load() {
    if (!sessionStorage.getItem(TOKEN_KEY)) {
      say("No access token: open the link printed by 'halluscope mishap annotate' (it ends in #token=...).");
      return;
    }
    const r = await fetch("/api/disagreements", { headers: { [HEADER]: sessionStorage.getItem(TOKEN_KEY) },
                                                  credentials: "omit", cache: "no-store" });
    const data = await r.json().catch(() => ({}));
    if (!r.ok) { say("Could not load the disagreements (" + (data.error || ("HTTP " + r.status)) + ")."); return; }
    say("");
    render(data);
    document.body.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", () => {
    takeToken();
    $("refresh").addEventListener("click", () => { load().catch((e) => say(String(e))); });
    load().catch((e) => say("Could not load the disagreements (" + e.message + ")."));
  });
})();
