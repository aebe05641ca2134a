"""Speech stages keyed per language (seed 000, 3.3: TTS and ASR chosen per language): changing one language's
engine recomputes that language only, with the real espeak-ng, Festival and Whisper base; a run stored before the
stages were split (tests/core/data/store_before_renames) reads, and resumes with no new work."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.core.store import Store
from halluscope.spoken import language_stages
from halluscope.spoken.build import load_build

OLD = Path(__file__).parents[1] / "core" / "data" / "store_before_renames"
ESPEAK = "en=espeak/en-us,ru=espeak/ru,kk=espeak/kk"
FESTIVAL_RU = "en=espeak/en-us,ru=festival/msu_ru_nsh_clunits,kk=espeak/kk"
TEXTS = {
    "en": "The bank raised the rate in March.",
    "ru": "Банк повысил ставку в марте.",
    "kk": "Банк наурызда мөлшерлемені көтерді.",
}


def _counts(stderr: str) -> dict[str, tuple[int, int]]:
    """'  tts       1 computed, 2 reused' and its language lines '    ru      1 computed, 0 reused' -> counts by label
    ('tts', 'tts ru', ...): what the command printed."""
    out: dict[str, tuple[int, int]] = {}
    kind = None
    for line in stderr.splitlines():
        words = line.split()
        if len(words) == 5 and words[2] == "computed," and words[4] == "reused":
            if line.startswith("    "):
                label = f"{kind} {words[0]}"
            else:
                kind = label = words[0]
            out[label] = (int(words[1]), int(words[3]))
    return out


ENGINES = pytest.mark.skipif(
    not (shutil.which("espeak-ng") and shutil.which("festival")), reason="needs espeak-ng and Festival"
)


def _builder(tmp_path, langs: str):
    """'halluscope build spoken' on a one-article-per-language corpus, as a user runs it: (texts -> the counts it
    printed, the build read back, the manifest's stage keys)."""
    corpus, run = tmp_path / "corpus.jsonl", tmp_path / "run"

    def build(tts: str, texts: dict[str, str]):
        rows = [{"id": f"{lang}-1", "language": lang, "text": texts[lang]} for lang in langs.split(",")]
        corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        args = ["build", "spoken", str(run), "--corpus", str(corpus), "--langs", langs, "--tts", tts]
        res = CliRunner().invoke(app, [*args, "--asr", "whisper/base", "--rewrites-per-article", "0"])
        assert res.exit_code == 0, res.output
        with Store(run, create=False) as store:
            return _counts(res.stderr), load_build(store), store.latest_manifest("build spoken").stages

    return build


@ENGINES
def test_another_russian_tts_recomputes_russian_only(tmp_path):
    build = _builder(tmp_path, "en,ru,kk")
    first, before, stages_before = build(ESPEAK, TEXTS)
    assert first["tts"] == first["asr"] == (3, 0)
    second, after, stages_after = build(FESTIVAL_RU, TEXTS)
    for kind in ("tts", "asr"):  # what the user sees: en and kk reused, ru computed
        assert second[kind] == (1, 2), second
        assert (second[f"{kind} en"], second[f"{kind} ru"], second[f"{kind} kk"]) == ((0, 1), (1, 0), (0, 1))
    assert after.audio["ru-1"].engine == "festival/msu_ru_nsh_clunits"
    assert after.audio["ru-1"].sha256 != before.audio["ru-1"].sha256
    for k in ("en-1", "kk-1"):  # the same clips and transcripts, not made again
        assert after.audio[k] == before.audio[k] and after.transcripts[k] == before.transcripts[k]
    assert after.transcripts["ru-1"].audio_sha256 == after.audio["ru-1"].sha256
    # each language's stage keeps its key unless its engine changed; the aggregate downstream stages name changes
    assert {k: stages_after[k] == stages_before[k] for k in ("tts@en", "tts@ru", "tts@kk", "asr@ru", "asr@kk")} == {
        "tts@en": True,
        "tts@ru": False,
        "tts@kk": True,
        "asr@ru": False,
        "asr@kk": True,
    }
    assert stages_after["tts"] != stages_before["tts"] and stages_after["asr"] != stages_before["asr"]


@ENGINES
def test_an_edited_article_is_the_only_item_made_again(tmp_path):
    # the corpus changed, so every stage's upstream did; each clip and transcript is checked against its item
    build = _builder(tmp_path, "en,kk")
    _, before, stages_before = build(ESPEAK, TEXTS)
    counts, after, stages_after = build(ESPEAK, {**TEXTS, "kk": TEXTS["kk"].replace("наурызда", "сәуірде")})
    assert stages_after["ingest"] != stages_before["ingest"]
    for kind in ("tts", "asr"):
        assert (counts[kind], counts[f"{kind} en"], counts[f"{kind} kk"]) == ((1, 1), (0, 1), (1, 0)), counts
    assert after.audio["kk-1"].sha256 != before.audio["kk-1"].sha256
    assert after.transcripts["kk-1"].audio_sha256 == after.audio["kk-1"].sha256
    assert after.audio["en-1"] == before.audio["en-1"] and after.transcripts["en-1"] == before.transcripts["en-1"]


def _make_store():
    spec = importlib.util.spec_from_file_location("make_store", OLD / "make_store.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.make


def test_a_run_stored_before_the_split_reads_and_resumes_with_no_new_work(tmp_path, monkeypatch):
    for name in ("HALLUSCOPE_LLM_CONFIG", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.setenv(name, "")  # make() sets them; monkeypatch puts the originals back
    shutil.copytree(OLD / "run", tmp_path / "run")
    with Store(tmp_path / "run", create=False) as store:
        stored = store.latest_manifest("build spoken").stages
        assert "tts" in stored and "tts@en" not in stored  # the fixture really is keyed by the whole stage
        old = load_build(store)
        old_attempts = store.attempts("tts", stored["tts"])
    assert old.audio and set(old.transcripts) == set(old.audio) == set(old.samples)

    got = _make_store()(tmp_path, old=False)  # the same build and detect with today's code
    assert got["calls"] == 0 and got["predictions"] == 4
    with Store(tmp_path / "run", create=False) as store:
        stages = store.latest_manifest("build spoken").stages
        assert stages["tts"] == stored["tts"] and stages["asr"] == stored["asr"]  # downstream keys unchanged
        assert set(language_stages.parts(stages, "tts")) == {"tts@en"}
        adopted = store.attempts("tts@en", stages["tts@en"])
        new = load_build(store)
    assert set(adopted) == set(old_attempts) and set(adopted.values()) == {1}  # copied once, none synthesised
    assert new.audio == old.audio and new.transcripts == old.transcripts


def test_parts_read_both_shapes():
    split = {"tts@en": "a", "tts@ru": "b", "tts": "w", "asr@en[x/y]": "c", "asr[x/y]": "v", "asr": "z"}
    assert language_stages.parts(split, "tts") == {"tts@en": "a", "tts@ru": "b"}
    assert language_stages.parts(split, "asr[x/y]") == {"asr@en[x/y]": "c"}
    assert language_stages.parts(split, "asr") == {"asr": "z"}  # no per-language parts: the whole stage
    assert language_stages.part_for(split, "tts", "ru") == ("tts@ru", "b")
    assert language_stages.part_for(split, "tts", "kk") is None  # split, and kk not among the parts
    whole = {"tts": "w"}
    assert language_stages.parts(whole, "tts") == {"tts": "w"} and language_stages.part_for(whole, "tts", "kk") == (
        "tts",
        "w",
    )
    assert language_stages.parts({}, "tts") == {}
