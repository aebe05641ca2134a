"""Helpers of the viewer and annotation-app tests: a stored zero-shot run with markup in a reply, a raw GET, and
headless Chromium."""

import http.client
import shutil
from pathlib import Path

import pytest

XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"> hallucinated'


def add_zero_shot_run(run: Path) -> str:
    """A stored zero-shot detect run (what 'halluscope detect --detector openai/...' leaves): predictions whose call
    keys point at replies in the calls table, one of them markup."""
    from halluscope.core.manifest import record_manifest
    from halluscope.core.records import Prediction
    from halluscope.core.stages import Stage
    from halluscope.core.store import Store
    from halluscope.spoken.build import load_build
    from halluscope.spoken.detect.splits import split_by_article

    spec = "openai/fake-detector"
    with Store(run) as store:
        b = load_build(store)
        splits = split_by_article(b.samples.values(), seed=0)
        stage = Stage("detect", {"detector": spec, "fixture": 1}, (b.stages["asr"],))
        for i, (k, v) in enumerate(sorted(b.samples.items())):
            key = f"fake-call-{i:04d}"
            reply = XSS if i == 0 else ("hallucinated" if i % 2 else "original")
            store.log_call(
                key=key,
                backend=spec,
                request={"messages": []},
                response={"choices": [{"message": {"content": reply}}]},
                status="ok",
                latency_s=0.1,
            )
            gold = "hallucinated" if v.label else "original"
            store.put(
                stage.name,
                stage.fingerprint,
                k,
                Prediction(
                    item_id=k,
                    detector=spec,
                    task="binary",
                    input="text",
                    split=splits[v.article_id],
                    gold=gold,
                    predicted="hallucinated" if "hallucinated" in reply else "original",
                    answer=reply[:20],
                    call_key=key,
                    zero_shot=True,
                ),
            )
        record_manifest(
            store,
            command="detect",
            config={"detector": spec, "task": "binary", "input": "text", "seed": 0, "options": {}},
            seeds={"split": 0},
            stages={"detect": stage.fingerprint, **b.stages},  # as 'detect' records them: the build it read
        )
    return spec


def http_get(srv, path: str, headers: dict | None = None) -> tuple[int, bytes, dict]:
    """GET ``path`` from a loopback test server, sent as it is (no Accept-Encoding added): (status, body, headers)."""
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=10)
    conn.putrequest("GET", path, skip_host=False, skip_accept_encoding=True)
    for k, v in (headers or {}).items():
        conn.putheader(k, v)
    conn.endheaders()
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body, dict(r.getheaders())


def chromium(tmp_path: Path):
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("needs Debian chromium and chromium-driver (scripts/install.sh installs them)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--autoplay-policy=no-user-gesture-required",
        f"--user-data-dir={tmp_path / 'chrome-profile'}",
    ):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)


def index_rows(doc: dict) -> list[dict]:
    """The viewer's index as the page rebuilds it from /api/index or data/index.js (ViewData.wire_index)."""
    return [dict(zip(doc["columns"], row)) for row in doc["rows"]]
