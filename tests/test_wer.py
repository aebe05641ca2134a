import json

import pytest
from typer.testing import CliRunner

from halluscope.cli import app
from halluscope.metrics.asr import normalize_for_wer, score_asr


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # lowercase, punctuation, digits and symbols removed, hyphens to spaces (seed 000, 3.3 / A.4)
        ("The state-owned bank raised rates to 16.75% on March 12, 2024.", "the state owned bank raised rates to on march"),
        ("[music] Hello <unk> world (inaudible) 00:01:23 again", "hello world again"),
        ("Национальный банк — «Самрук-Қазына» повысил ставку до 16,75 процента!", "национальный банк самрук қазына повысил ставку до процента"),
        ("Қазақстан Ұлттық банкі 2024 жылғы 12 наурызда мөлшерлемені көтерді.", "қазақстан ұлттық банкі жылғы наурызда мөлшерлемені көтерді"),
        ("  Many   spaces\tand\nnewlines  ", "many spaces and newlines"),
        ("Ёлка—ЁЖ", "ёлка ёж"),
    ],
)
def test_normalisation(raw, expected):
    assert normalize_for_wer(raw) == expected


def test_corpus_level_wer_is_total_edits_over_total_reference_words():
    # item 1: 'a b c d' vs 'a x c' -> 1 substitution + 1 deletion = 2 edits over 4 words
    # item 2: 'e f' vs 'e f g' -> 1 insertion over 2 words; corpus WER = 3 / 6 = 0.5 (not the mean 0.5/0.5 by luck:
    # item WERs are 0.5 and 0.5; use a third item to separate the two)
    # item 3: 'h' vs '' -> 1 deletion over 1 word; corpus = 4 / 7, mean of items = (0.5 + 0.5 + 1) / 3
    s = score_asr(reference=["A b, c d.", "e f", "h"], hypothesis=["a x c", "e-f g", ""])
    assert s.wer == pytest.approx(4 / 7)
    assert s.n == 3 and s.ref_words == 7


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
    from halluscope.errors import InputError
    from halluscope.scoring import score_asr_file

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"reference": "a", "hypothesis": "a", "language": "en"}\n{"reference": "a", "language": "en"}\n')
    with pytest.raises(InputError) as err:
        score_asr_file(pairs)
    assert "row 2" in str(err.value) and "field 'hypothesis'" in str(err.value)
