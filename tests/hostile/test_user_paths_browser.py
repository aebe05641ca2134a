"""A real headless Chromium plays a clip in the served viewer from a relative, a '~/...' and a symlinked RUN (the
README's `halluscope view runs/x`), opens the export of a relative RUN from file://, and, with the run's store
locked by another process, the rating form shows the 503 and its retry stores the rating once."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from halluscope.core.store import STORE_NAME
from halluscope.view.quality import QualityLabels
from halluscope.view.server import ViewServer, export_view
from support.view_helpers import chromium

pytestmark = pytest.mark.slow  # drives a browser (about 30 s)
TOKEN = "browser-path-token-1"
DURATION_JS = (
    "const a = document.querySelector('#item audio'), done = arguments[arguments.length - 1];"
    "if (a.readyState >= 1) { done(a.duration); } else {"
    "a.onloadedmetadata = () => done(a.duration); a.onerror = () => done('error: ' + (a.error && a.error.code));"
    " a.load(); }"
)
PLAY_JS = (
    "const a = document.querySelector('#item audio'), done = arguments[arguments.length - 1];"
    "a.muted = true; a.play().then(() => setTimeout(() => done(a.currentTime), 400), (e) => done('error: ' + e));"
)
LOCKER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=1)
db.execute("BEGIN EXCLUSIVE")
db.execute("CREATE TABLE IF NOT EXISTS held_by_test (x)")
print("locked", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
"""


def ready(driver, wait):
    wait.until(lambda d: d.find_element("tag name", "body").get_attribute("data-ready") == "1")


def test_the_viewer_plays_and_rates_from_relative_tilde_and_symlinked_runs(tiny_runs, tmp_path, monkeypatch):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    home, scratch, elsewhere = tmp_path / "home", tmp_path / "scratch", tmp_path / "elsewhere"
    for d in (home, scratch, elsewhere):
        d.mkdir()
    shutil.copytree(tiny_runs["ok"], scratch / "x", ignore=shutil.ignore_patterns(".lock"))
    (home / "linked").symlink_to(scratch / "x")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)
    driver = chromium(tmp_path)
    try:
        wait = WebDriverWait(driver, 20)
        for run in ("../scratch/x", "~/linked", "../home/linked"):
            with ViewServer(run, token=TOKEN) as srv:
                item = next(k.split(":", 1)[1] for k in srv.view.audio)
                driver.get(srv.url)
                ready(driver, wait)
                driver.get(f"http://127.0.0.1:{srv.port}/#item={item}")
                ready(driver, wait)
                wait.until(
                    lambda d: (
                        d.find_element(By.CSS_SELECTOR, "#item .audio").get_attribute("data-audio") in ("ok", "error")
                    )
                )
                assert driver.find_element(By.CSS_SELECTOR, "#item .audio").get_attribute("data-audio") == "ok", run
                duration = driver.execute_async_script(DURATION_JS)
                assert isinstance(duration, float) and duration > 0, (run, duration)
                played = driver.execute_async_script(PLAY_JS)
                assert isinstance(played, (int, float)) and played > 0, (run, played)
                if run != "~/linked":
                    continue
                # the store locked by another process: the form shows the 503 and retries until it is stored, once
                locker = subprocess.Popen(
                    [sys.executable, "-c", LOCKER, str(scratch / "x" / STORE_NAME)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                try:
                    assert locker.stdout.readline().strip() == "locked"
                    driver.find_element(By.ID, "annotator").send_keys("retry-test")
                    driver.find_element(By.CSS_SELECTOR, "#item .save-quality").click()
                    wait.until(lambda d: "store busy" in d.find_element(By.CSS_SELECTOR, "#item .saved").text)
                finally:
                    locker.communicate("go\n", timeout=20)
                WebDriverWait(driver, 40).until(
                    lambda d: d.find_element(By.CSS_SELECTOR, "#item .saved").text.startswith("saved:")
                )
        labels = QualityLabels(scratch / "x")
        try:
            assert [r["item_id"] for r in labels.all() if r["annotator"] == "retry-test"] == [item]
        finally:
            labels.close()

        # the export of a relative RUN, opened from file://: the clip loads with no server
        page, _, copied = export_view("../scratch/x", "exported")
        assert copied > 0
        driver.get(f"file://{(elsewhere / page).resolve()}#item={item}")
        ready(driver, wait)
        duration = driver.execute_async_script(DURATION_JS)
        assert isinstance(duration, float) and duration > 0, duration
    finally:
        driver.quit()
