"""The annotation app in a real headless Chromium (Debian chromium + chromedriver, driven by Selenium): a full
labelling session in both modes, an XSS attempt in a response, a wrong token, path-traversal requests."""

import http.client
import shutil
import sqlite3

import pytest
import scripted

from halluscope.errors import HalluscopeError
from halluscope.mishap.annotate import Annotations, AnnotationServer, annotation_items, export_labels, human_labels
from halluscope.mishap.metrics import human_human_agreement

TOKEN = "test-token-123456"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        return scripted.build_run(tmp_path_factory.mktemp("annotate"), mp, judge=False)


def raw_get(server, path, headers=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
    conn.putrequest("GET", path, skip_host=False, skip_accept_encoding=True)
    for k, v in (headers or {}).items():
        conn.putheader(k, v)
    conn.endheaders()
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body, dict(r.getheaders())


def test_http_guards(run):
    with pytest.raises(HalluscopeError, match="loopback"):
        AnnotationServer(run, host="0.0.0.0", token=TOKEN)
    with AnnotationServer(run, token=TOKEN, sample=4) as srv:
        assert srv.host == "127.0.0.1" and len(srv.items) == 4
        assert srv.url == f"http://127.0.0.1:{srv.port}/#token={TOKEN}"  # the token rides in the fragment only
        auth = {"X-Halluscope-Token": TOKEN}
        assert raw_get(srv, "/api/items")[0] == 403
        assert raw_get(srv, "/api/items", {"X-Halluscope-Token": "wrong-token-1234"})[0] == 403
        assert raw_get(srv, "/api/items", {"Cookie": f"mishap_token={TOKEN}"})[0] == 403  # cookies are no credential
        assert raw_get(srv, f"/api/items?token={TOKEN}")[0] == 403  # nor is the query string
        status, body, headers = raw_get(srv, "/api/items", auth)
        assert status == 200 and b'"items"' in body and "script-src 'self'" in headers["Content-Security-Policy"]
        status, body, headers = raw_get(srv, "/")  # the page itself holds no secret
        assert status == 200 and b"MISHAP annotation" in body and "Set-Cookie" not in headers
        clip = srv.items[0]["clip_id"]
        status, body, _ = raw_get(srv, f"/audio/{clip}", auth)
        assert status == 200 and body[:4] == b"RIFF"
        assert raw_get(srv, f"/audio/{clip}")[0] == 403
        for path in ("/audio/../../../../etc/passwd", "/audio/..%2f..%2f..%2fetc%2fpasswd", "/../../etc/passwd",
                     "/audio/%2e%2e/halluscope.sqlite", "/halluscope.sqlite", "/static/../annotate.py",
                     "/app.js/../../../etc/passwd", "/audio//etc/passwd", "/audio/" + str(run / "halluscope.sqlite")):
            status, body, _ = raw_get(srv, path, auth)
            assert status == 404 and b"root:" not in body and b"SQLite" not in body, path


def _driver(tmp_path):
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("needs Debian chromium and chromium-driver (scripts/install.sh installs them)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'chrome-profile'}"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)


def test_full_labelling_session_in_chromium(run, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait

    items, _ = annotation_items(run)
    xss_items = [i for i in items if "<script>" in (i["response"] or "")]
    assert xss_items
    driver = _driver(tmp_path)
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
                wait.until(lambda d: "saved: hallucinated" in d.find_element(By.CSS_SELECTOR, "#cards .saved-label").text)
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
                "a.preload = 'metadata'; a.load();")
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
                wait.until(lambda d: all(s.text.startswith("saved:")
                                         for s in d.find_elements(By.CSS_SELECTOR, "#cards .saved-label")))
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
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        ann._db.execute("UPDATE mishap_annotations SET label='grounded'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        ann._db.execute("DELETE FROM mishap_annotations")
    ann.close()
    labels = human_labels(run)
    assert sum(1 for (a, w) in labels if w == "alice") == total
    hh = human_human_agreement(labels)
    assert hh[0]["pair"] == "alice vs bob" and hh[0]["n"] == total
    assert export_labels(run, tmp_path / "labels.csv") == 2 * total
