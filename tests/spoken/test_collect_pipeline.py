"""The corpus data pipeline (issue 29; seed 000, 3.1-3.2 and its release terms): saved pages -> collect -> dedup ->
translate -> release (no original text) -> rehydrate (hash-verified), round-tripping byte for byte, and 'build
spoken' on the rehydrated corpus."""

import html
import json

import pytest

pytest.importorskip("trafilatura")
pytest.importorskip("datasketch")

from halluscope.spoken.build import BuildConfig, build_spoken  # noqa: E402
from halluscope.spoken.collect.dedup import dedup  # noqa: E402
from support.chat_server import ChatServer, Reply  # noqa: E402
from support.hostile_helpers import assert_clean_failure, run_cli  # noqa: E402

OUTLETS = {"en": "Kazinform", "ru": "Tengrinews", "kk": "Egemen"}


def page(a: dict, lang: str, *, title: str) -> str:
    paras = "".join(f"<p>{html.escape(s.strip())}.</p>" for s in a["text"].rstrip(".").split(". "))
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'<meta property="og:site_name" content="{OUTLETS[lang]}">'
        f'<meta property="article:published_time" content="{a["date"]}T09:00:00+05:00">'
        f'<meta property="article:section" content="{a["topic"]}"></head><body>'
        f'<nav><a href="/">Home</a> <a href="/news">News</a></nav><article><h1>{html.escape(title)}</h1>{paras}'
        f"</article><footer>(c) {OUTLETS[lang]} 2024. All rights reserved.</footer></body></html>"
    )


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    rows = [
        json.loads(x)
        for x in open(__import__("halluscope.spoken.corpus", fromlist=["x"]).demo_path(), encoding="utf-8")
    ]
    root = tmp_path_factory.mktemp("collect")
    folder = root / "pages"
    folder.mkdir()
    listed = []
    for lang in ("en", "ru", "kk"):
        for i, a in enumerate([r for r in rows if r["language"] == lang][:3]):
            name = f"{lang}{i}.html"
            (folder / name).write_text(page(a, lang, title=f"{lang} news {i}"), encoding="utf-8")
            listed.append(
                {"page": f"pages/{name}", "url": f"https://{OUTLETS[lang].lower()}.kz/news/{i}", "topic": a["topic"]}
            )
    dup = [r for r in rows if r["language"] == "ru"][0]  # a republished copy with one changed sentence end
    near = dict(dup, text=dup["text"].replace(".", "!", 1))
    (folder / "ru-copy.html").write_text(page(near, "ru", title="ru copy"), encoding="utf-8")
    listed.append({"page": "pages/ru-copy.html", "url": "https://copy.kz/1"})
    (root / "pages.jsonl").write_text("\n".join(json.dumps(x) for x in listed), encoding="utf-8")
    kk_texts = [r["text"] for r in rows if r["language"] == "kk"]
    return root, kk_texts


def test_dedup_removes_near_duplicates_and_lists_pairs():
    base = "the national bank lowered its base rate to fourteen percent after inflation slowed for months " * 3
    rows = [
        {"id": "a", "language": "en", "text": base},
        {"id": "b", "language": "en", "text": base + " again"},
        {"id": "c", "language": "en", "text": "a different story about wheat exports from the north region"},
        {"id": "d", "language": "ru", "text": base},
    ]  # other language: never compared
    kept, report = dedup(rows, threshold=0.8)
    assert [r["id"] for r in kept] == ["a", "c", "d"]
    assert report["threshold"] == 0.8 and report["removed"] == 1
    assert report["pairs"][0]["kept"] == "a" and report["pairs"][0]["removed"] == "b"
    assert report["pairs"][0]["jaccard_exact"] >= 0.8


def test_collect_dedup_translate_release_rehydrate_round_trip_then_build(pages, tmp_path, capsys, monkeypatch):
    root, kk_texts = pages
    code, out = run_cli(capsys, monkeypatch, "corpus", "collect", root / "pages.jsonl", "--out", tmp_path / "c.jsonl")
    assert code == 0, out
    collected = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(collected) == 10
    en0 = next(r for r in collected if r["page"] == "en0.html")
    assert en0["outlet"] == "Kazinform" and en0["date"].startswith("20") and en0["language"] == "en"
    assert en0["url"] == "https://kazinform.kz/news/0" and "Home" not in en0["text"] and "rights" not in en0["text"]
    code, out = run_cli(
        capsys,
        monkeypatch,
        "corpus",
        "dedup",
        tmp_path / "c.jsonl",
        "--out",
        tmp_path / "d.jsonl",
        "--threshold",
        "0.7",
    )
    assert code == 0, out
    rep = json.loads((tmp_path / "d.dedup.json").read_text(encoding="utf-8"))
    assert rep["threshold"] == 0.7 and [p["kept"] for p in rep["pairs"]] == [
        next(r["id"] for r in collected if r["page"] == "ru0.html")
    ]

    sources: dict[str, str] = {}

    def script(req, n):  # a stand-in translator: ru -> kk gives a Kazakh text; back gives the Russian source
        prompt = req["messages"][0]["content"]
        text = prompt.split("\n\n", 1)[1]
        if "into Kazakh" in prompt:
            kk = kk_texts[len(sources) % len(kk_texts)]
            sources[kk] = text
            return Reply(content=kk)
        return Reply(content=sources[text])

    translate = ("corpus", "translate", tmp_path / "d.jsonl", "--out", tmp_path / "t.jsonl", "--from", "ru", "--to")
    with ChatServer(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        code, out = run_cli(capsys, monkeypatch, *translate, "kk", "--model", "openai/mt")
        assert code == 0, out
        first = (srv.count, (tmp_path / "t.jsonl").read_bytes())
        code, out = run_cli(capsys, monkeypatch, *translate, "kk", "--model", "openai/mt")  # the same command again
        assert code == 0, out
        assert (srv.count, (tmp_path / "t.jsonl").read_bytes()) == first  # no model call: the store answered
    assert first[0] == 6 and "0 model calls, 6 from the store" in out
    assert (tmp_path / "t.jsonl.store" / "halluscope.sqlite").is_file()
    tr = json.loads((tmp_path / "t.translate.json").read_text(encoding="utf-8"))
    assert tr["asked"] == 3 and tr["translated"] == 3
    assert all(c["language_id"] == "kk" and c["back_similarity"] == 1.0 and "length_ratio" in c for c in tr["items"])
    code, out = run_cli(
        capsys,
        monkeypatch,
        "corpus",
        "release",
        tmp_path / "t.jsonl",
        "--out",
        tmp_path / "r.jsonl",
        "--pages",
        root / "pages",
    )
    assert code == 0, out
    released = (tmp_path / "r.jsonl").read_text(encoding="utf-8")
    originals = [json.loads(x) for x in released.splitlines() if json.loads(x)["kind"] == "original"]
    assert len(originals) == 9 and all("text" not in r and r["offsets"][1] > r["offsets"][0] for r in originals)
    assert en0["text"][:60] not in released  # no original text in the release
    code, out = run_cli(
        capsys,
        monkeypatch,
        "corpus",
        "rehydrate",
        tmp_path / "r.jsonl",
        "--out",
        tmp_path / "h.jsonl",
        "--pages",
        root / "pages",
    )
    assert code == 0, out
    assert (tmp_path / "h.jsonl").read_bytes() == (tmp_path / "t.jsonl").read_bytes()  # exactly the corpus

    # a changed page is caught by the hash, one clear line
    changed = tmp_path / "changed"
    changed.mkdir()
    for p in (root / "pages").iterdir():
        text = p.read_text(encoding="utf-8")
        (changed / p.name).write_text(
            text.replace("<p>", "<p>Updated: ", 1) if p.name == "en0.html" else text, encoding="utf-8"
        )
    code, out = run_cli(
        capsys,
        monkeypatch,
        "corpus",
        "rehydrate",
        tmp_path / "r.jsonl",
        "--out",
        tmp_path / "x.jsonl",
        "--pages",
        changed,
    )
    # one changed page: nothing written (a corpus is rebuilt whole), one line naming the page and the fix
    assert_clean_failure(code, out, "corpus rehydrate", "1 failed", "page en0.html changed", "Fix:", "--allow-partial")
    assert not (tmp_path / "x.jsonl").exists()
    code, out = run_cli(
        capsys,
        monkeypatch,
        "corpus",
        "rehydrate",
        tmp_path / "r.jsonl",
        "--out",
        tmp_path / "x.jsonl",
        "--pages",
        changed,
        "--allow-partial",
    )
    assert code == 0 and "left out" in out and "en0.html" in out, out
    partial = (tmp_path / "x.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(partial) == len((tmp_path / "h.jsonl").read_text(encoding="utf-8").splitlines()) - 1

    from support.tiny_encoder import register_text_speech

    register_text_speech()
    build = build_spoken(
        tmp_path / "run",
        BuildConfig(
            corpus=str(tmp_path / "h.jsonl"), tts="test-bytes", asr="test-bytes", seed=1, rewrites_per_article=1
        ),
        quiet=True,
    )
    assert len([v for v in build.samples.values() if v.label == 0]) == 12 and not build.failures.get("ingest")
    assert sum(v.label == 1 for v in build.samples.values()) >= 10
