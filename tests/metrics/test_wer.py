import json

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.metrics.asr import normalize_for_wer, score_asr


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # lowercase, punctuation, digits and symbols removed, hyphens to spaces (seed 000, 3.3 / A.4)
        (
            "The state-owned bank raised rates to 16.75% on March 12, 2024.",
            "the state owned bank raised rates to on march",
        ),
        # noise tags in [] or <> and timestamps go; words in parentheses are speech and stay (App. A.4)
        ("[music] Hello <unk> world (inaudible) 00:01:23 again", "hello world inaudible again"),
        ("Astana (Kazinform) [Reuters] {update} <b>", "astana kazinform reuters update b"),
        ("<|0.00|> [BLANK_AUDIO] [Music playing] <s> don't <|endoftext|>", "dont"),
        (
            "Национальный банк — «Самрук-Қазына» повысил ставку до 16,75 процента!",
            "национальный банк самрук қазына повысил ставку до процента",
        ),
        (
            "Қазақстан Ұлттық банкі 2024 жылғы 12 наурызда мөлшерлемені көтерді.",
            "қазақстан ұлттық банкі жылғы наурызда мөлшерлемені көтерді",
        ),
        ("  Many   spaces\tand\nnewlines  ", "many spaces and newlines"),
        ("Ёлка—ЁЖ", "ёлка ёж"),
    ],
)
def test_normalisation(raw, expected):
    assert normalize_for_wer(raw) == expected


# Ten pairs that differ only by bracket characters, quotes, noise tags and timestamps, plus one real word
# error in en ('grew' -> 'grow') and one in ru ('студенты' -> 'студент'), each one character; the last two
# columns are App. A.4's result written by hand (None: the hypothesis cleans to the same as the reference).
PAIRS = [
    (
        "en",
        "Astana (Kazinform) The National Bank kept its base rate unchanged.",
        "[music] Astana Kazinform, the national bank kept its base rate unchanged",
        "astana kazinform the national bank kept its base rate unchanged",
        None,
    ),
    (
        "en",
        'About 300 people (mostly students) joined the "Clean City" campaign.',
        "00:00:05 about 300 people, mostly students, joined the clean city campaign <unk>",
        "about people mostly students joined the clean city campaign",
        None,
    ),
    (
        "en",
        "The minister said [the plan] would start in {spring}.",
        "The minister said the plan would start in spring. [NOISE]",
        "the minister said the plan would start in spring",
        None,
    ),
    (
        "en",
        "The akimat's budget grew by 12%, officials said.",
        "<|0.00|> the akimat's budget grow by 12 % officials said <|endoftext|>",
        "the akimats budget grew by officials said",
        "the akimats budget grow by officials said",
    ),
    (
        "ru",
        "Астана (Казинформ) — Национальный банк сохранил базовую ставку.",
        "Астана, Казинформ. Национальный банк сохранил базовую ставку [музыка]",
        "астана казинформ национальный банк сохранил базовую ставку",
        None,
    ),
    (
        "ru",
        "«Самрук-Қазына» объявил о выплате дивидендов.",
        "00:01:23 Самрук Қазына объявил о выплате дивидендов",
        "самрук қазына объявил о выплате дивидендов",
        None,
    ),
    (
        "ru",
        "В акции приняли участие около 500 человек (в основном студенты).",
        "в акции приняли участие около 500 человек, в основном студент <unk>",
        "в акции приняли участие около человек в основном студенты",
        "в акции приняли участие около человек в основном студент",
    ),
    (
        "kk",
        "Астана (Kazinform) – Ұлттық банк базалық мөлшерлемені өзгеріссіз қалдырды.",
        "Астана Kazinform Ұлттық банк базалық мөлшерлемені өзгеріссіз қалдырды",
        "астана kazinform ұлттық банк базалық мөлшерлемені өзгеріссіз қалдырды",
        None,
    ),
    (
        "kk",
        "«Қазатомпром» компаниясы [жаңа] кен орнын ашты.",
        "[Music] Қазатомпром компаниясы жаңа кен орнын ашты.",
        "қазатомпром компаниясы жаңа кен орнын ашты",
        None,
    ),
    (
        "kk",
        "Шараға 200-ге жуық адам қатысты (негізінен студенттер).",
        "шараға 200-ге жуық адам қатысты, негізінен студенттер. 00:00:12 <noise>",
        "шараға ге жуық адам қатысты негізінен студенттер",
        None,
    ),
]


def test_brackets_quotes_noise_tags_and_timestamps_cost_nothing():
    for _, ref, hyp, ref_clean, hyp_clean in PAIRS:
        assert normalize_for_wer(ref) == ref_clean
        assert normalize_for_wer(hyp) == (hyp_clean or ref_clean)
    by_lang = {
        lang: score_asr(
            reference=[p[1] for p in PAIRS if p[0] == lang], hypothesis=[p[2] for p in PAIRS if p[0] == lang]
        )
        for lang in ("en", "ru", "kk")
    }
    # en: 1 word error of 35 words, 1 character of 211; ru: 1 of 22 words, 1 of 157 characters; kk: none
    assert (by_lang["en"].wer, by_lang["en"].cer) == (pytest.approx(1 / 35), pytest.approx(1 / 211))
    assert (by_lang["ru"].wer, by_lang["ru"].cer) == (pytest.approx(1 / 22), pytest.approx(1 / 157))
    assert (by_lang["kk"].wer, by_lang["kk"].cer) == (0.0, 0.0)
    assert (by_lang["en"].ref_words, by_lang["en"].ref_chars) == (35, 211)
    overall = score_asr(reference=[p[1] for p in PAIRS], hypothesis=[p[2] for p in PAIRS])
    assert (overall.wer, overall.cer, overall.ref_words) == (pytest.approx(2 / 78), pytest.approx(2 / 527), 78)
    assert overall.cleaner == "rules" and overall.as_dict()["cleaner"] == "rules"


def test_real_references_keep_every_word(realdata):
    # real English references (JFK, LibriVox): cleaning drops punctuation and case, never a word
    import re

    files = sorted((realdata / "speech_en").rglob("*.txt"))
    assert len(files) >= 7
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            words = [w.replace("'", "") for w in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)*", line.lower())]
            assert normalize_for_wer(line).split() == words, (path.name, line)


def test_every_character_is_blanked_by_its_unicode_category():
    # the rule per character (digits Nd, punctuation P*, symbols S* -> a space; every other character stays), applied
    # one character at a time, against normalize_for_wer's one pass, on every plane's characters mixed with spaces
    import random
    import unicodedata

    def by_category(text: str) -> str:
        text = unicodedata.normalize("NFC", text).lower()
        blank = [" " if unicodedata.category(c) == "Nd" or unicodedata.category(c)[0] in "PS" else c for c in text]
        return " ".join("".join(blank).split())

    rng = random.Random(0)
    points = [*range(0x20, 0xD800), *range(0xE000, 0x30000)]
    texts = ["".join(chr(rng.choice(points)) if rng.random() < 0.8 else " " for _ in range(80)) for _ in range(3000)]
    texts += ["Emoji 😀 and 𝟙𝟚 digits, 🇰🇿 flags — «quotes» ₸5 %", "a­b‍c ́x  y"]
    assert [normalize_for_wer(t) for t in texts] == [by_category(t) for t in texts]


def test_corpus_level_wer_is_total_edits_over_total_reference_words():
    # item 1: 'a b c d' vs 'a x c' -> 1 substitution + 1 deletion = 2 edits over 4 words
    # item 2: 'e f' vs 'e f g' -> 1 insertion over 2 words; corpus WER = 3 / 6 = 0.5 (not the mean 0.5/0.5 by luck:
    # item WERs are 0.5 and 0.5; use a third item to separate the two)
    # item 3: 'h' vs '' -> 1 deletion over 1 word; corpus = 4 / 7, mean of items = (0.5 + 0.5 + 1) / 3
    s = score_asr(reference=["A b, c d.", "e f", "h"], hypothesis=["a x c", "e-f g", ""])
    assert s.wer == pytest.approx(4 / 7)
    assert s.n == 3 and s.ref_words == 7
    # cer=False: the same WER without the character pass (the report's raw-text WER)
    w = score_asr(reference=["A b, c d.", "e f", "h"], hypothesis=["a x c", "e-f g", ""], cer=False)
    assert (w.wer, w.cer, w.n, w.ref_words) == (s.wer, None, 3, 7) and s.cer is not None


def test_edit_counts_are_what_jiwer_counts_on_real_text(realdata):
    """WER/CER add up per-pair edit counts taken from rapidfuzz directly; each count is jiwer's (S + D + I and the
    reference length under its default transforms), on real transcripts cut and garbled, in both cleanings."""
    import random

    import jiwer

    from halluscope.analysis.parity import wer_counts
    from halluscope.core.records import Transcript
    from halluscope.metrics.asr import RawText, RuleCleaner, edit_counts, item_scores, pair_counts

    rng = random.Random(0)
    lines = [
        x
        for p in sorted((realdata / "speech_en").rglob("*.txt"))
        for x in p.read_text(encoding="utf-8").splitlines()
        if x.strip()
    ]
    assert len(lines) >= 7
    pairs = [("a  b\tc ", " a b  c"), ("x", ""), ("\u0430\u049b\u0448\u0430", "\u0430\u043a\u0448\u0430")]
    for line in lines * 4:
        words = line.split()
        garbled = [w for w in words if rng.random() > 0.15]
        garbled.insert(rng.randrange(len(garbled) + 1), "inserted")
        pairs.append((line, " ".join(garbled)))
    for cleaner in (RuleCleaner(), RawText()):
        cleaned = [
            (r, h) for r, h in zip(cleaner.clean([r for r, _ in pairs]), cleaner.clean([h for _, h in pairs])) if r
        ]
        for r, h in cleaned:
            we, wn, ce, cn = edit_counts(r, h)
            w, c = jiwer.process_words(r, h), jiwer.process_characters(r, h)
            assert (we, wn) == (w.substitutions + w.deletions + w.insertions, w.hits + w.substitutions + w.deletions)
            assert (ce, cn) == (c.substitutions + c.deletions + c.insertions, c.hits + c.substitutions + c.deletions)
        s = score_asr(reference=[r for r, _ in cleaned], hypothesis=[h for _, h in cleaned], cleaner=RawText())
        assert s.wer == pytest.approx(jiwer.wer([r for r, _ in cleaned], [h for _, h in cleaned]), abs=1e-12)
        assert s.cer == pytest.approx(jiwer.cer([r for r, _ in cleaned], [h for _, h in cleaned]), abs=1e-12)
    assert pair_counts(lines[0], lines[0] + " extra")[:2] == (1, len(normalize_for_wer(lines[0]).split()))
    # a transcript's kept counts (Transcript.edits) give every figure of the corpus score, some pairs kept, some not,
    # references that clean to nothing among them
    pairs += [("2024, 12", "twelve"), ("[music]", "music")]
    stored = [pair_counts(r, h) if i % 3 else None for i, (r, h) in enumerate(pairs)]
    refs, hyps = [r for r, _ in pairs], [h for _, h in pairs]
    assert score_asr(reference=refs, hypothesis=hyps, counts=stored) == score_asr(reference=refs, hypothesis=hyps)
    assert score_asr(reference=refs, hypothesis=hyps, counts=stored, cer=False) == score_asr(
        reference=refs, hypothesis=hyps, cer=False
    )
    kept = Transcript(
        item_id="x", language="en", text="unused", asr="a", audio_sha256="0", audio_duration_s=1, processing_s=0,
        edits=pair_counts(refs[3], hyps[3]),
    )  # fmt: skip
    assert wer_counts(refs[3], kept) == [float(c) for c in pair_counts(refs[3], hyps[3])[:2]]
    raw = [pair_counts(r, h, RawText()) if i % 2 else None for i, (r, h) in enumerate(pairs)]
    assert score_asr(reference=refs, hypothesis=hyps, cleaner=RawText(), counts=raw) == score_asr(
        reference=refs, hypothesis=hyps, cleaner=RawText()
    )
    # what the build keeps per transcript, and the item's own WER and CER from it
    item = item_scores(refs[3], hyps[3])
    assert (item["edits"], item["raw_edits"]) == (
        pair_counts(refs[3], hyps[3]),
        pair_counts(refs[3], hyps[3], RawText()),
    )
    assert (item["wer"], item["cer"]) == (
        score_asr(reference=[refs[3]], hypothesis=[hyps[3]]).wer,
        score_asr(reference=[refs[3]], hypothesis=[hyps[3]]).cer,
    )


def test_cer_on_kazakh_counts_characters():
    # 'көтерді' vs 'көтерді' after normalisation: identical -> 0; 'ақша' vs 'акша' -> 1 of 4 chars
    s = score_asr(reference=["Ақша!"], hypothesis=["акша"])
    assert s.cer == pytest.approx(1 / 4) and s.wer == pytest.approx(1.0)


def test_references_empty_after_normalisation_are_counted_not_scored():
    s = score_asr(reference=["2024", "hello"], hypothesis=["twenty", "hello"])
    assert s.skipped_empty_reference == 1 and s.n == 1 and s.wer == 0.0


def test_score_asr_cli_prints_per_language_and_overall_json(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"reference": "the bank raised rates", "hypothesis": "the bank raised rate", "language": "en"},
        {"reference": "банк повысил ставку", "hypothesis": "банк повысил ставку", "language": "ru"},
        {"reference": "банк мөлшерлемені көтерді", "hypothesis": "банк мөлшерлеме көтерді", "language": "kk"},
    ]
    pairs.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    result = CliRunner().invoke(app, ["score", "asr", str(pairs), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["en"]["wer"] == pytest.approx(1 / 4)
    assert out["ru"]["wer"] == 0.0
    assert out["kk"]["wer"] == pytest.approx(1 / 3)
    assert out["overall"]["wer"] == pytest.approx(2 / 10)
    assert set(out) == {"en", "ru", "kk", "overall"}


def test_score_asr_cli_bad_row_names_row_and_field(tmp_path):
    from halluscope.core.errors import InputError
    from halluscope.metrics.scoring import score_asr_file

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"reference": "a", "hypothesis": "a", "language": "en"}\n{"reference": "a", "language": "en"}\n')
    with pytest.raises(InputError) as err:
        score_asr_file(pairs)
    assert "row 2" in str(err.value) and "field 'hypothesis'" in str(err.value)


def test_item_error_rate_chinese_uses_characters():
    from halluscope.metrics.asr import item_error_rate

    assert item_error_rate("今天天气很好", "今天天气很好。", chinese=True) == 0.0
    assert item_error_rate("今天天气很好", "今天天气不好", chinese=True) == pytest.approx(1 / 6)  # 1 of 6 characters
    assert item_error_rate("Hello, world!", "hello world", chinese=False) == 0.0
    assert item_error_rate("a b c d", "a x c", chinese=False) == pytest.approx(2 / 4)  # one substitution, one deletion
    assert item_error_rate("", "", chinese=False) == 0.0 and item_error_rate("", "words", chinese=False) == 1.0
