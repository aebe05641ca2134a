"""Several ASR systems on the same audio in one run (seed 000 Table 7) and the audio-duration table."""

import json
import statistics

import jiwer
import pytest

from halluscope.backends.speech import ASR_BACKENDS
from halluscope.core.errors import HalluscopeError
from halluscope.core.records import AudioRef, Variant
from halluscope.core.store import Store
from halluscope.metrics.asr import normalize_for_wer
from halluscope.report import write_report
from halluscope.spoken import language_stages
from halluscope.spoken.build import BuildConfig, BuildResult, build_spoken, load_build
from halluscope.spoken.report import collect
from halluscope.spoken.report.speech import WINDOW_S, audio_rows


class DropAsr:
    """Reads the text-carrying clip back and drops every third word: a worse system than 'test-bytes'."""

    spec = "test-drop"

    def transcribe(self, samples, *, language):
        from support.tiny_encoder import TextAsr

        words = TextAsr().transcribe(samples, language=language).split()
        return " ".join(w for i, w in enumerate(words) if i % 3 != 2)


@pytest.fixture(scope="module")
def two_asr_run(tmp_path_factory):
    from support.corpus_fixtures import EN, KK, RU, write_jsonl
    from support.tiny_encoder import register_text_speech

    register_text_speech()
    if "test-drop" not in ASR_BACKENDS.providers:
        ASR_BACKENDS.register("test-drop")(lambda model, **o: DropAsr())
    tmp = tmp_path_factory.mktemp("t7")
    rows = [
        {"id": f"{lang}-{i}", "language": lang, "text": t}
        for lang, texts in (("en", EN[:3]), ("ru", RU), ("kk", KK))
        for i, t in enumerate(texts, 1)
    ]
    corpus = write_jsonl(tmp / "corpus.jsonl", rows)
    cfg = BuildConfig(
        corpus=str(corpus),
        rewrites_per_article=1,
        seed=5,
        tts="test-bytes",
        asr="test-bytes",
        compare_asr=("en=test-drop,ru=test-drop,kk=test-bytes",),
    )
    run = tmp / "run"
    return run, cfg, build_spoken(run, cfg, quiet=True)


def _jiwer(build: BuildResult, transcripts, lang: str) -> tuple[float, float]:
    ids = sorted(k for k, t in transcripts.items() if lang == "all" or t.language == lang)
    ref = [normalize_for_wer(build.samples[k].text) for k in ids]
    hyp = [normalize_for_wer(transcripts[k].text) for k in ids]
    return jiwer.wer(ref, hyp), jiwer.cer(ref, hyp)


def test_each_asr_system_is_its_own_stage_on_the_same_audio(two_asr_run):
    run, cfg, result = two_asr_run
    assert not result.failures, result.failures
    other = "en=test-drop,ru=test-drop,kk=test-bytes"
    assert set(result.compared) == {other} and "asr[" + other + "]" in result.stages
    assert set(result.compared[other]) == set(result.transcripts) == set(result.audio)
    for k, t in result.compared[other].items():
        assert t.audio_sha256 == result.transcripts[k].audio_sha256  # the same clip
        assert t.asr == ("test-bytes" if t.language == "kk" else "test-drop")
    with Store(run) as store:
        again = load_build(store)
    assert again.compared == result.compared and again.asr_spec == "test-bytes"
    # a rerun computes nothing; the same system twice is refused
    with Store(run) as store:
        assert set(language_stages.attempts(store, result.stages, "asr[" + other + "]").values()) == {1}
        assert {f"asr@{lang}[{other}]" for lang in cfg.langs} <= set(result.stages)  # one stage per language
    with pytest.raises(HalluscopeError, match="repeats ASR 'test-bytes'"):
        build_spoken(run, cfg.model_copy(update={"compare_asr": ("test-bytes",)}), quiet=True)


def test_table7_figures_match_jiwer_on_the_same_pairs(two_asr_run):
    run, _, result = two_asr_run
    data = collect(run)
    rows = {(r["asr"], r["language"]): r for r in data.table7}
    other = "en=test-drop,ru=test-drop,kk=test-bytes"
    assert {r["role"] for r in data.table7 if r["asr"] == other} == {"compared"}
    for system, ts in (("test-bytes", result.transcripts), (other, result.compared[other])):
        for lang in ("en", "ru", "kk", "all"):
            wer, cer = _jiwer(result, ts, lang)
            assert rows[(system, lang)]["wer"] == pytest.approx(wer, abs=1e-4)
            assert rows[(system, lang)]["cer"] == pytest.approx(cer, abs=1e-4)
    assert rows[("test-bytes", "en")]["wer"] == 0.0 < rows[(other, "en")]["wer"]  # dropping words costs
    assert rows[(other, "kk")]["wer"] == 0.0 and rows[(other, "kk")]["engine"] == "test-bytes"
    path = write_report(run).html
    assert "Table 7: ASR systems on the same audio" in (path.parent / "tables.md").read_text()
    assert (
        json.loads((path.parent / "headline.json").read_text())["tables"]["table7_asr_systems"]["rows"] == data.table7
    )
    assert (path.parent / "table7_asr_systems.csv").read_text().count("\n") == len(data.table7) + 1


def test_unknown_transcript_set_names_the_ones_there(two_asr_run):
    run, _, result = two_asr_run
    assert result.transcripts_of(None) is result.transcripts
    with pytest.raises(HalluscopeError, match="no transcripts from ASR 'whisper/base'.*'test-bytes'"):
        result.transcripts_of("whisper/base")


def test_audio_durations_per_language_and_share_over_the_window(tmp_path):
    durations = {"en": [10.0, 40.0, 31.0], "ru": [5.0, 6.0]}
    samples, audio = {}, {}
    for lang, ds in durations.items():
        for i, d in enumerate(ds):
            k = f"{lang}-{i}"
            samples[k] = Variant(id=k, article_id=k, language=lang, text="x", label=0, generator="original")
            audio[k] = AudioRef(
                item_id=k,
                path=f"{k}.wav",
                sha256="0",
                sample_rate=16000,
                duration_s=d,
                engine=f"tts-{lang}",
                voice="v",
                text_sha256="0",
            )
    rows = {r["language"]: r for r in audio_rows(BuildResult(tmp_path, samples, audio, {}, {}, {}), ["en", "ru"])}
    assert WINDOW_S == 30.0
    assert rows["en"]["median_s"] == 31.0 and rows["en"]["over_window"] == pytest.approx(2 / 3, abs=1e-3)
    assert rows["ru"]["over_window"] == 0.0 and rows["ru"]["engines"] == "tts-ru"
    assert rows["all"]["median_s"] == statistics.median([10, 40, 31, 5, 6]) and rows["all"]["clips"] == 5


def test_detectors_read_the_transcripts_they_are_told_to(two_asr_run):
    from halluscope.core.records import Prediction
    from halluscope.spoken.detect import detect

    run, _, result = two_asr_run
    other = "en=test-drop,ru=test-drop,kk=test-bytes"
    default = detect(run, task="binary", input="transcript")
    chosen = detect(run, task="binary", input="transcript", transcripts=other)
    assert default.stage_fingerprint != chosen.stage_fingerprint
    assert (
        detect(run, task="binary", input="transcript", transcripts="test-bytes").stage_fingerprint
        == default.stage_fingerprint
    )  # the build's own spec is the default
    seen: list[str] = []
    from dataclasses import replace

    import halluscope.spoken.detect.run as run_mod

    original = run_mod.DETECTORS["tfidf"]
    try:  # the registered kind, with only its runner swapped (and put back whole)
        run_mod.DETECTORS["tfidf"] = replace(original, run=lambda ctx: seen.extend(ctx.x_of(v) for v in ctx.items))
        with pytest.raises(HalluscopeError, match="produced nothing"):
            detect(run, task="binary", input="transcript", transcripts=other, seed=9)
    finally:
        run_mod.DETECTORS["tfidf"] = original
    en = {result.compared[other][k].text for k in result.compared[other] if k.startswith("en-")}
    assert en and en <= set(seen)  # the dropped-word transcripts, not the build's
    with pytest.raises(HalluscopeError, match="no transcripts from ASR 'nope'"):
        detect(run, task="binary", input="transcript", transcripts="nope")
    detect(run, task="binary", input="transcript", transcripts=other)  # the latest run of that key is the report's
    rows = collect(run).detection
    assert {r["detector"] for r in rows} >= {"tfidf", f"tfidf [transcripts={other}]"}  # labelled by what differs
    assert isinstance(next(iter(chosen.predictions.values())), Prediction)
