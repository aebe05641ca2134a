"""Curation as seed 001 does it: domain / source quotas enforced after the informativeness filter, and the False
Authority name check never skipped silently."""

import json

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.errors import InputError
from halluscope.core.records import MishapClip
from halluscope.core.store import Store
from halluscope.mishap.clips import apply_quotas
from support import scripted
from support.chat_server import ChatServer


def _clips():
    out = {}
    for domain, sources in (("music", ("sdd", "mridangam")), ("sound", ("clotho", "fsd50k")), ("speech", ("libri",))):
        for src in sources:
            for i in range(4 if src != "mridangam" else 1):
                cid = f"{src}-{i}"
                out[cid] = MishapClip(id=cid, domain=domain, source=src, audio="x.wav", description="d")
    return out


def test_quotas_per_source_then_per_domain_in_turn():
    clips = _clips()
    kept, dropped, short = apply_quotas(clips, list(clips), per_source=3, per_domain=4, seed=0)
    by = lambda dom: [c for c in kept if clips[c].domain == dom]
    assert len(by("sound")) == 4 and {clips[c].source for c in by("sound")} == {"clotho", "fsd50k"}
    assert sum(clips[c].source == "clotho" for c in kept) == 2  # taken from the two sources in turn
    assert len(by("music")) == 4 and sum(clips[c].source == "mridangam" for c in kept) == 1
    assert len(by("speech")) == 3
    assert {r.split(" (")[0] for r in dropped.values()} == {"over the per-source quota", "over the per-domain quota"}
    assert "source mridangam (music): 1 informative clips, quota 3" in short
    assert "domain speech: 3 clips after the filter and source quotas, quota 4" in short
    assert kept == [c for c in clips if c in set(kept)]  # manifest order
    again = apply_quotas(clips, list(clips), per_source=3, per_domain=4, seed=0)
    assert again[0] == kept and apply_quotas(clips, list(clips), per_source=3, per_domain=4, seed=5)[0] != kept
    k2, _, _ = apply_quotas(clips, list(clips), per_source={"sdd": 1, "clotho": 2})
    assert sum(clips[c].source == "sdd" for c in k2) == 1 and sum(clips[c].source == "libri" for c in k2) == 4
    with pytest.raises(InputError, match=r"'per_source'.*\['clothoo'\]"):
        apply_quotas(clips, list(clips), per_source={"clothoo": 2})


def test_clips_cli_enforces_quotas_after_the_filter(tmp_path, monkeypatch):
    manifest = scripted.write_clips(tmp_path / "data")  # six clips + one uninformative sound clip
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}))
    monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(cfg))
    run = tmp_path / "run"
    with ChatServer(scripted.make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        res = CliRunner().invoke(
            app,
            ["mishap", "clips", str(run), "--manifest", str(manifest), "--filter-llm", "openai/f", "--per-domain", "1"],
        )
    assert res.exit_code == 0, res.output
    assert "1 dropped by the informativeness filter, 3 over the quotas" in res.output.replace("\n", " ")
    with Store(run) as store:
        m = store.latest_manifest("mishap clips")
    assert len(m.config["kept"]) == 3 and "vague" not in m.config["kept"]
    assert m.config["dropped"]["vague"].startswith("uninformative")
    assert m.config["quotas"]["per_domain"] == 1 and m.config["quotas"]["short"] == []
    res = CliRunner().invoke(
        app, ["mishap", "clips", str(run), "--manifest", str(manifest), "--per-source", "2", "--per-source", "espeak=1"]
    )
    assert res.exit_code == 2 and "not both" in " ".join(res.output.replace("│", " ").split())


def test_false_authority_is_checked_against_the_shipped_list_by_default(tmp_path, monkeypatch, capsys):
    run = scripted.build_run(tmp_path, monkeypatch, judge=False, seeds=(0,), per_category=2)
    from halluscope.mishap.questions import load_questions, real_source_names

    with Store(run) as store:
        qs = load_questions(store)
        m = store.latest_manifest("mishap questions")
    fa = [q for q in qs.values() if q.strategy == "false_authority"]
    assert fa and all(q.checks.get("name_collision_checked") is True and q.checks["name_collision_free"] for q in fa)
    assert m.config["false_authority_checked"] is True and m.config["with_audio"] is False  # an openai/ writer
    assert m.config["real_source_names"] == len(real_source_names()) > 50
    assert {"LibriSpeech", "FSD50K", "Clotho", "Common Voice"} <= set(real_source_names())


def test_real_source_names_extend_by_file_or_go_without_the_shipped_list(tmp_path):
    from halluscope.mishap.questions import name_collision, real_source_names

    (tmp_path / "more.txt").write_text("# mine\nThe Mridangam Rhythm Atlas\n", encoding="utf-8")
    names = real_source_names(tmp_path / "more.txt")
    assert names[-1] == "The Mridangam Rhythm Atlas" and len(names) == len(real_source_names()) + 1
    assert real_source_names(tmp_path / "more.txt", shipped=False) == ("The Mridangam Rhythm Atlas",)
    assert name_collision("the Song Describer dataset", real_source_names()) == "Song Describer Dataset"


def test_shipped_real_names_record_their_source_and_licence():
    """Issue 28, item 6: the default list holds the six source datasets (seed 001, Table 3) and the names read in a
    public list with its licence, each row saying where it was read; the names in the paper are really in it."""
    import os
    from pathlib import Path

    from halluscope.mishap.questions import real_source_names, shipped_sources

    rows = shipped_sources()
    assert [r["name"] for r in rows] == list(real_source_names())  # the check's default names are these rows
    assert all(r["name"].strip() and r["source"].strip() and r["licence"].strip() for r in rows)
    assert len({r["name"].lower() for r in rows}) == len(rows)
    six = {
        "Song Describer Dataset",
        "Mridangam Stroke 1.5",
        "Clotho v2.1",
        "FSD50K",
        "LibriSpeech",
        "Common Voice 22.0",
    }
    assert six <= {r["name"] for r in rows}
    packages = [r for r in rows if r["source"].startswith(("mirdata 1.0.0", "soundata 1.0.1"))]
    assert len(packages) > 50 and all(r["licence"].startswith("BSD-3-Clause") for r in packages)
    shared = Path(
        os.environ.get("HALLUSCOPE_REALDATA", Path(__file__).resolve().parents[2].parent / "shared" / "realdata")
    )
    spec = next((shared.parent / "spec").glob("001_*.txt"), None)  # ../shared/spec beside the clone (tests/conftest.py)
    if spec is not None:  # the development checkout: every name credited to the paper is in its text
        text = spec.read_text(encoding="utf-8")
        assert all(r["name"] in text for r in rows if r["source"].startswith("MISHAP-Bench paper"))
