"""The viewer in a real headless Chromium (Debian chromium + chromedriver via Selenium) over a real run (rules ->
espeak-ng -> Whisper base -> TF-IDF): the served page with its token, the clip playing with the right duration, the
transcript alignment equal to jiwer's, markup in a reply rendered as text, a speech-quality rating stored; the
exported folder from file:// with no server, opened from a report cell."""

import json

import jiwer
import pytest

from halluscope.core.store import Store
from halluscope.metrics.asr import normalize_for_wer
from halluscope.spoken.build import load_build
from halluscope.view.quality import latest_quality
from halluscope.view.server import ViewServer, export_view
from support.view_helpers import XSS, chromium, http_get

pytestmark = pytest.mark.slow  # builds a run with espeak-ng and Whisper base (about a minute on two cores)
TOKEN = "view-token-123456"

DURATION_JS = (
    "const a = document.querySelector('#item audio'), done = arguments[arguments.length - 1];"
    "if (a.readyState >= 1) { done(a.duration); } else {"
    "a.onloadedmetadata = () => done(a.duration); a.onerror = () => done('error: ' + (a.error && a.error.code)); a.load(); }"
)
PLAY_JS = (
    "const a = document.querySelector('#item audio'), done = arguments[arguments.length - 1];"
    "a.muted = true; a.play().then(() => setTimeout(() => done(a.currentTime), 600), (e) => done('error: ' + e));"
)


def build_of(run):
    with Store(run, create=False, lock=False) as store:
        return load_build(store)


def expected_alignment(reference, hypothesis):
    out = jiwer.process_words(normalize_for_wer(reference), normalize_for_wer(hypothesis))
    ref, hyp, words = out.references[0], out.hypotheses[0], []
    for c in out.alignments[0]:
        r, h = ref[c.ref_start_idx : c.ref_end_idx], hyp[c.hyp_start_idx : c.hyp_end_idx]
        if c.type == "substitute":
            words += [("substitute", a, b) for a, b in zip(r, h)]
        elif c.type == "insert":
            words += [("insert", w) for w in h]
        else:
            words += [(c.type, w) for w in r]
    return words


def shown_alignment(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#item .align > span')].map((s) => s.dataset.op === 'substitute'"
        " ? [s.dataset.op, s.querySelector('.ref').textContent, s.querySelector('.hyp').textContent]"
        " : [s.dataset.op, s.textContent]);"
    )


def ready(driver, wait):
    wait.until(lambda d: d.find_element("tag name", "body").get_attribute("data-ready") == "1")


def test_served_viewer_in_chromium(viewrun, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    b = build_of(viewrun)
    rewrite = next(k for k in sorted(b.samples) if b.samples[k].label == 1 and k in b.transcripts)
    xss_item = sorted(b.samples)[0]  # the fixture's first stored reply is markup
    with ViewServer(viewrun, token=TOKEN) as srv:
        auth = {"X-Halluscope-Token": TOKEN}
        assert http_get(srv, "/api/index")[0] == 403
        status, body, _ = http_get(srv, "/api/index", auth)
        assert status == 200 and json.loads(body)["meta"]["n"] == len(b.samples)
        for path in (
            "/audio/../../etc/passwd",
            "/audio/%2e%2e%2fhalluscope.sqlite",
            "/halluscope.sqlite",
            "/api/chunk/99999",
            "/api/chunk/-1",
        ):
            assert http_get(srv, path, auth)[0] == 404, path
        assert http_get(srv, f"/audio/spoken%3A{rewrite}")[0] == 403  # clips need the token too
        status, body, _ = http_get(srv, f"/audio/spoken%3A{rewrite}", auth)
        assert status == 200 and body[:4] == b"RIFF"

        driver = chromium(tmp_path)
        try:
            wait = WebDriverWait(driver, 20)
            base = f"http://127.0.0.1:{srv.port}/"
            driver.get(srv.url)
            ready(driver, wait)
            assert driver.current_url == base  # the token left the address bar
            assert driver.execute_script("return document.cookie") == ""
            assert driver.find_element(By.ID, "pos").get_attribute("data-total") == str(len(b.samples))
            Select(driver.find_element(By.ID, "f-label")).select_by_value("original")
            ready(driver, wait)
            originals = sum(v.label == 0 for v in b.samples.values())
            wait.until(lambda d: d.find_element(By.ID, "pos").get_attribute("data-total") == str(originals))
            assert "label=original" in driver.current_url  # the filter is a permalink

            # one rewrite: edits marked, the clip plays with its recorded duration, the alignment is jiwer's
            driver.get(base + "#item=" + rewrite)
            ready(driver, wait)
            assert driver.find_element(By.CSS_SELECTOR, "#item .item-id").text == rewrite
            v = b.samples[rewrite]
            marks = driver.find_elements(By.CSS_SELECTOR, "#item .rewrite mark.edit")
            assert {int(m.get_attribute("data-edit")): m.text for m in marks} == {
                i: c.after for i, c in enumerate(v.changes) if c.after
            }
            before = driver.find_elements(By.CSS_SELECTOR, "#item .original mark.edit")
            assert {int(m.get_attribute("data-edit")): m.text for m in before} == {
                i: c.before for i, c in enumerate(v.changes) if c.before
            }
            wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#item .audio").get_attribute("data-audio") == "ok")
            src = driver.find_element(By.CSS_SELECTOR, "#item audio").get_attribute("src")
            assert src.startswith("blob:" + base.rstrip("/"))
            duration = driver.execute_async_script(DURATION_JS)
            assert isinstance(duration, float) and abs(duration - b.audio[rewrite].duration_s) < 0.05
            played = driver.execute_async_script(PLAY_JS)
            assert isinstance(played, (int, float)) and played > 0, played
            shown = [tuple(x) for x in shown_alignment(driver)]
            assert shown == expected_alignment(v.text, b.transcripts[rewrite].text)
            assert any(op != "equal" for op, *_ in shown)  # Whisper on espeak makes errors: the marks are exercised

            # the rating form stores an append-only row
            driver.find_element(By.ID, "annotator").send_keys("aigerim")
            Select(driver.find_element(By.CSS_SELECTOR, "#item select[name=fidelity]")).select_by_value("major")
            driver.find_element(By.CSS_SELECTOR, "#item input[name=excluded]").click()
            driver.find_element(By.CSS_SELECTOR, "#item .save-quality").click()
            wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#item .saved").text.startswith("saved:"))
            row = latest_quality(viewrun)[rewrite]["aigerim"]
            assert (row["fidelity"], row["excluded"], row["intelligibility"]) == ("major", True, "fully")

            # a reply holding markup renders as text and runs nothing
            driver.get(base + "#item=" + xss_item)
            ready(driver, wait)
            raws = [e.get_attribute("textContent") for e in driver.find_elements(By.CSS_SELECTOR, "#item pre.raw")]
            assert XSS in raws
            assert driver.execute_script("return window.__xss === undefined")
            assert driver.find_elements(By.CSS_SELECTOR, "#item img, #item script") == []
        finally:
            driver.quit()


def test_export_opens_from_file_and_report_cells_link_to_items(viewrun, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from halluscope.report import write_report

    b = build_of(viewrun)
    page, n, clips = export_view(viewrun, viewrun / "view")
    assert n == len(b.samples) and clips == len(b.audio)
    report = write_report(viewrun).html
    driver = chromium(tmp_path)
    try:
        wait = WebDriverWait(driver, 20)
        driver.get(report.resolve().as_uri())
        # Table 1, English row, the fabrication column: the items behind the count
        cell = driver.find_element(By.CSS_SELECTOR, 'a[href$="#lang=en&kind=spoken&type=fabrication"]')
        count = int(cell.text)
        cell.click()
        wait.until(lambda d: d.current_url.startswith(page.resolve().as_uri()))
        ready(driver, wait)
        ids = {e.get_attribute("data-id") for e in driver.find_elements(By.CSS_SELECTOR, "#rows tbody tr")}
        assert ids == {k for k, v in b.samples.items() if v.type == "fabrication"} and len(ids) == count > 0

        # Table 2, the T macro-F1 cell of the TF-IDF binary run: its test items
        driver.get(report.resolve().as_uri())
        cell = driver.find_element(By.CSS_SELECTOR, 'a[href*="run=tfidf%7Cbinary%7Ctranscript&lang=en"]')
        cell.click()
        ready(driver, wait)
        with Store(viewrun, create=False, lock=False) as store:
            m = [
                x
                for x in store.manifests()
                if x.command == "detect" and x.config["detector"] == "tfidf" and x.config["input"] == "transcript"
            ][-1]
            from halluscope.core.records import Prediction

            test = {k for k, p in store.results("detect", m.stages["detect"], Prediction).items() if p.split == "test"}
        ids = {e.get_attribute("data-id") for e in driver.find_elements(By.CSS_SELECTOR, "#rows tbody tr")}
        assert ids == test and ids

        # an item from file://: the copied clip plays with its duration, the alignment is there
        rewrite = next(k for k in sorted(b.samples) if b.samples[k].label == 1 and k in b.transcripts)
        driver.get(page.resolve().as_uri() + "#item=" + rewrite)
        ready(driver, wait)
        assert driver.find_element(By.CSS_SELECTOR, "#item .item-id").text == rewrite
        src = driver.find_element(By.CSS_SELECTOR, "#item audio").get_attribute("src")
        assert src.startswith("file://") and src.endswith(".wav")
        duration = driver.execute_async_script(DURATION_JS)
        assert isinstance(duration, float) and abs(duration - b.audio[rewrite].duration_s) < 0.05
        shown = [tuple(x) for x in shown_alignment(driver)]
        assert shown == expected_alignment(b.samples[rewrite].text, b.transcripts[rewrite].text)
        assert "read-only" in driver.find_element(By.CSS_SELECTOR, "#item .quality").text
        logs = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not logs, logs  # no CSP violation, no failed load
    finally:
        driver.quit()
