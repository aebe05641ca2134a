"""Kuan et al.'s generative captions, files written to the released shape (metadata CSV with list literals; the
authors' generation JSON): ECHO_I, ECHO_S and Cover computed by hand on three captions."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.closedform.kuan_captions import named_objects, score_kuan_captions
from halluscope.core.errors import InputError
from halluscope.reply.free import normalize_label


def _files(tmp_path: Path) -> tuple[Path, Path]:
    meta = tmp_path / "generative_data_metadata.csv"
    with meta.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["youtube_id", "caption", "label"])
        w.writerow(["Y1", "['A dog barks as a man speaks', 'A dog barks and rain falls']", "['Dog', 'Speech']"])
        w.writerow(["Y2", "['Rain falls on a roof']", "['Rain', 'Rain on surface']"])
    preds = tmp_path / "generative.json"
    preds.write_text(
        json.dumps(
            {
                "Y1": {
                    "Describe the audio.": {
                        "prediction": "A dog barks and a car engine idles."
                    },  # Dog; Car hallucinated
                    "What do you hear?": {"prediction": "Speech, not a dog."},
                },  # Speech; dog negated
                "Y2": {
                    "Describe the audio.": {"prediction": "Rain on surface, with speech."}
                },  # Rain on surface; Speech
                "Y9": {"Describe the audio.": {"prediction": "x"}},
            }
        ),
        encoding="utf-8",
    )
    return meta, preds


def test_echo_and_cover(tmp_path: Path) -> None:
    meta, preds = _files(tmp_path)
    # the vocabulary is every clip's labels: Dog, Speech, Rain, Rain on surface ("car" is no label: not an object)
    r = score_kuan_captions(meta, preds)
    m = r["metrics"]["all"]
    assert m["n_captions"] == 3 and m["objects_named"] == 4  # dog | speech | rain on surface, speech
    assert m["echo_i"] == 1 / 4 and m["echo_s"] == 1 / 3  # Y2's speech is hallucinated
    assert m["cover"] == 3 / 6  # Y1: dog, speech of 2 (twice 2 truths), Y2: rain on surface of 2
    assert r["problems"] == [f"{preds}: clip 'Y9' is not in {meta}"]
    assert named_objects("Rain on surface.", ["Rain", "Rain on surface"]) == {"rain on surface"}


def test_bad_literal_is_one_clear_error(tmp_path: Path) -> None:
    meta, preds = _files(tmp_path)
    meta.write_text("youtube_id,caption,label\nY1,\"['a']\",\"['Dog'\"\n", encoding="utf-8")
    with pytest.raises(InputError, match="row 2.*label|label.*row 2"):
        score_kuan_captions(meta, preds)


def test_cli(tmp_path: Path) -> None:
    meta, preds = _files(tmp_path)
    res = CliRunner().invoke(app, ["score", "captions", str(meta), str(preds), "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    assert json.loads(res.stdout)["metrics"]["Describe the audio."]["n_captions"] == 2


def _extract_script(answers: dict[str, str]):
    from support.chat_server import Reply, user_text

    def script(req: dict, n: int) -> Reply:
        caption = user_text(req).split("Description: ", 1)[1]
        return Reply(content=answers[caption])

    return script


def test_llm_extractor_through_a_scripted_server_stored_and_named(tmp_path: Path, monkeypatch) -> None:
    from support.chat_server import ChatServer

    meta, preds = _files(tmp_path)
    answers = {
        "A dog barks and a car engine idles.": 'Sounds: ["dog barking", "car engine"]',
        "Speech, not a dog.": '```json\n["speech"]\n```',
        "Rain on surface, with speech.": "I cannot tell.",  # no array: unscored, never 'names nothing'
        "A dog barks as a man speaks": '["dog", "man speaking"]',  # the human captions (the floor)
        "A dog barks and rain falls": '["dog", "rain"]',
        "Rain falls on a roof": '["rain"]',
    }
    args = ["score", "captions", str(meta), str(preds), "--extractor", "llm:openai/extract-m"]
    with ChatServer(_extract_script(answers)) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        first = CliRunner().invoke(app, [*args, "--json"])
        assert first.exit_code == 0, (first.output, first.exception)
        calls = srv.count
        text = CliRunner().invoke(app, args)
        assert text.exit_code == 0 and srv.count == calls == 6  # the rerun is answered from the store
    r = json.loads(first.stdout)
    assert r["extractor"] == "llm:openai/extract-m" and r["notes"][0].startswith("extractor: llm:openai/extract-m")
    m = r["metrics"]["all"]
    # Y1: dog barking (Dog) + car engine (no label: hallucinated); speech (Speech); Y2 unscored
    assert m["n_captions"] == 3 and m["unscored"] == 1 and m["objects_named"] == 3
    assert m["echo_i"] == 1 / 3 and m["echo_s"] == 1 / 2 and m["cover"] == 2 / 4
    raw = {i["prediction"]: i for i in r["items"]}
    assert raw["Rain on surface, with speech."]["extractor_raw"] == "I cannot tell."
    assert "no JSON array" in raw["Rain on surface, with speech."]["reason"]
    assert "extractor: llm:openai/extract-m" in text.output and "1 caption(s) unscored" in text.output
    assert (tmp_path / "generative.json.extractor").is_dir()


def test_vocabulary_is_the_default_and_named(tmp_path: Path) -> None:
    r = score_kuan_captions(*_files(tmp_path))
    assert r["extractor"] == "vocabulary" and "lower bound" in r["notes"][0]
    res = CliRunner().invoke(app, ["score", "captions", *map(str, _files(tmp_path)), "--extractor", "gpt"])
    assert isinstance(res.exception, InputError) and "llm:<spec>" in str(res.exception)


def _kuan_as_captions(realdata: Path, tmp_path: Path) -> tuple[Path, Path, list[dict]]:
    """Kuan et al.'s real question file in the generative task's released shape: each question is a 'caption' that
    names exactly one object (its 'object' column), a clip's labels are its objects asked with label Yes; the
    prompt key is the question's format (Format1..5, the paper's five phrasings)."""
    lines = [
        ln
        for ln in (realdata / "kuan_object_hallucination" / "balanced_popular_test_957.txt")
        .read_text(encoding="utf-8")
        .splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    rows = list(csv.DictReader(lines, delimiter="\t"))
    present: dict[str, set[str]] = {}
    for r in rows:
        present.setdefault(r["audio_index"], set())
        if r["label"] == "Yes":
            present[r["audio_index"]].add(r["object"])
    meta = tmp_path / "generative_data_metadata.csv"
    with meta.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["youtube_id", "caption", "label"])
        for r in rows:
            w.writerow([f"{r['audio_index']}#{r['entry_id']}", "[]", repr(sorted(present[r["audio_index"]]))])
    preds = tmp_path / "generative.json"
    preds.write_text(
        json.dumps(
            {
                f"{r['audio_index']}#{r['entry_id']}": {r["question_format"]: {"prediction": r["prompt_text"]}}
                for r in rows
            }
        ),
        encoding="utf-8",
    )
    return meta, preds, rows


def test_both_extractors_on_kuan_real_questions(realdata: Path, tmp_path: Path, monkeypatch) -> None:
    import re

    from support.chat_server import ChatServer

    meta, preds, rows = _kuan_as_captions(realdata, tmp_path)
    yes = {f"{r['audio_index']}#{r['entry_id']}" for r in rows if r["label"] == "Yes"}
    vocab = score_kuan_captions(meta, preds)
    # every asked-present object is found in its question and grounded, whatever its released spelling
    # ("frying (food)", "clip-clop", "fixed-wing aircraft")
    assert all(i["covered"] and not i["hallucinated"] for i in vocab["items"] if i["youtube_id"] in yes)
    # the scripted LLM answers each question with its object as a person would write it: no qualifier in brackets
    plain = {r["prompt_text"]: json.dumps([re.sub(r"\s*\(.*?\)", "", r["object"])]) for r in rows}
    with ChatServer(_extract_script(plain)) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        from halluscope.closedform.llmextract import LLMExtractor

        llm = score_kuan_captions(meta, preds, extractor=LLMExtractor("openai/extract-m", tmp_path / "store"))
        assert srv.count == len(plain)  # one call per distinct caption text: the same request is sent once
    assert llm["metrics"]["all"]["unscored"] == 0
    assert all(i["covered"] and not i["hallucinated"] for i in llm["items"] if i["youtube_id"] in yes)
    negatives = 1 - len(yes) / len(rows)
    for r in (vocab, llm):  # a negative question's object is hallucinated unless it names a present one
        assert 0.8 * negatives < r["metrics"]["all"]["echo_s"] <= negatives


def test_human_floor_beside_every_score(tmp_path: Path) -> None:
    """The clips' own reference captions scored the same way, per prompt over that prompt's clips, by hand:
    Y1 'A dog barks as a man speaks' {dog}, 'A dog barks and rain falls' {dog, rain: hallucinated}; Y2 'Rain falls
    on a roof' {rain}; every clip has two labels."""
    r = score_kuan_captions(*_files(tmp_path))
    every = r["metrics"]["all"]
    assert (every["human_echo_i"], every["human_echo_s"], every["human_cover"]) == (1 / 4, 1 / 3, 3 / 6)
    only_y1 = r["metrics"]["What do you hear?"]  # answered for Y1 only: its floor is Y1's captions
    assert (only_y1["human_echo_i"], only_y1["human_echo_s"], only_y1["human_cover"]) == (1 / 3, 1 / 2, 2 / 4)
    assert all(f"human_{k}" in m for m in r["metrics_compat"].values() for k in ("echo_i", "echo_s", "cover"))
    assert r["human"]["metrics"]["n_captions"] == 3 and r["human"]["n_clips"] == 2
    assert {h["prompt"] for h in r["human_items"]} == {"human captions"}


def test_human_captions_as_predictions_score_their_own_floor(tmp_path: Path) -> None:
    meta, _ = _files(tmp_path)
    preds = tmp_path / "human.json"
    preds.write_text(
        json.dumps(
            {
                "Y1": {"h1": "A dog barks as a man speaks", "h2": "A dog barks and rain falls"},
                "Y2": {"h1": "Rain falls on a roof"},
            }
        ),
        encoding="utf-8",
    )
    r = score_kuan_captions(meta, preds)
    for mode in ("metrics", "metrics_compat"):
        m = r[mode]["all"]
        assert all(m[k] == m[f"human_{k}"] for k in ("echo_i", "echo_s", "cover"))


def test_compat_follows_the_authors_per_caption_averaging(tmp_path: Path) -> None:
    """evaluation.py (Kuan et al.): per caption CHAIR = 1 - |P & L| / |P| (-1 when P is empty), Hal = [CHAIR != 0]
    (-1 when empty), Cover = |P & L| / |L|, each the mean over captions, x100, 2 decimals."""
    meta, _ = _files(tmp_path)
    preds = tmp_path / "two.json"
    preds.write_text(
        json.dumps({"Y1": {"p": "Rain on a window."}, "Y2": {"p": "Nothing I can name."}}), encoding="utf-8"
    )
    r = score_kuan_captions(meta, preds)
    pooled, compat = r["metrics"]["all"], r["metrics_compat"]["all"]
    # Y1 names rain (not its label): CHAIR 1, Hal 1, Cover 0; Y2 names nothing: CHAIR -1, Hal -1, Cover 0
    assert (compat["echo_i"], compat["echo_s"], compat["cover"], compat["no_object"]) == (0.0, 0.0, 0.0, 1)
    assert (pooled["echo_i"], pooled["echo_s"]) == (1.0, 1 / 2)  # pooled: 1 of 1 object, 1 of 2 captions
    # the fixture's three captions: CHAIR 0, 0, 1/2 -> 16.67; Hal 0, 0, 1 -> 33.33; Cover 1/2 each -> 50
    full = score_kuan_captions(*_files(tmp_path))["metrics_compat"]["all"]
    assert (full["echo_i"], full["echo_s"], full["cover"]) == (16.67, 33.33, 50.0)


@pytest.mark.parametrize(
    ("caption", "present"),
    [
        ("There is no explosion, only birds.", {"bird"}),
        ("A man speaks without any music.", {"speaking"}),  # "speaks" is a form of "speaking"
        ("Wind blows, but no one is speaking.", {"wind"}),
        ("In the absence of birds, only the wind is heard.", {"wind"}),
        ("The dog cannot be heard; a bird sings.", {"bird"}),
        ("Rain is absent and the wind is not audible.", set()),
        ("Not only a dog but also birds.", {"dog", "bird"}),
        ("The music is not loud.", {"music"}),
        ("The wind never stops.", {"wind"}),
        ("There are no dogs or birds, and a man speaks over music.", {"music", "speaking"}),
        ("Birds chirp instead of a dog barking.", {"bird"}),
    ],
)
def test_negated_mentions_are_not_objects(caption: str, present: set[str]) -> None:
    vocab = ["Explosion", "Bird", "Music", "Wind", "Dog", "Rain", "Speaking"]
    assert named_objects(caption, vocab) == present


def test_audioset_display_names_name_their_label() -> None:
    assert named_objects("A car horn honks twice.", ["Vehicle horn, car horn, honking", "Car"]) == {
        "vehicle horn, car horn, honking"
    }
    # an acoustic environment's parts name a place, "etc." names nothing
    vocab = ["Inside, small room", "Outside, rural or natural", "Bee, wasp, etc."]
    assert named_objects("Recorded outside: a wasp, then more noise etc.", vocab) == {"bee, wasp, etc."}


@pytest.mark.parametrize("name", ["captions_heldout.jsonl", "captions_heldout2.jsonl"])
def test_held_out_captions_hand_labelled(name: str) -> None:
    """Captions written after the extractor was tuned (the first set after the negation scope, the second after
    the matching of word forms), as audio LMs caption, each object's presence labelled by hand. No object labelled
    absent is read as present; the agreement over all (caption, object) pairs is in docs/tutorials/closedform.md."""
    rows = [json.loads(x) for x in (Path(__file__).parent / name).read_text(encoding="utf-8").splitlines()]
    vocab = sorted({k for r in rows for k in r["objects"]})
    pairs = agree = 0
    for r in rows:
        named = named_objects(r["caption"], vocab)
        hand = {normalize_label(k): v for k, v in r["objects"].items()}
        assert not {k for k, v in hand.items() if not v} & named, r["caption"]
        for lab in set(hand) | named:
            pairs += 1
            agree += hand.get(lab, False) == (lab in named)
    assert agree / pairs >= 0.75  # the misses left are words no label spells ("a man talks" for speech)


def test_cli_text_json_and_report_carry_the_floor_and_both_modes(tmp_path: Path) -> None:
    meta, preds = _files(tmp_path)
    args = ["score", "captions", str(meta), str(preds)]
    text = CliRunner().invoke(app, [*args, "--report", str(tmp_path / "rep")])
    assert text.exit_code == 0, (text.output, text.exception)
    out = " ".join(text.output.split())
    assert "echo_i=0.250 [human 0.250]" in out and "echo_i=16.67 [human 16.67]" in out
    assert out.index("pooled over captions") < out.index("per-caption averages")
    compat = " ".join(CliRunner().invoke(app, [*args, "--compat"]).output.split())
    assert compat.index("per-caption averages") < compat.index("pooled over captions")
    md = (tmp_path / "rep" / "tables.md").read_text(encoding="utf-8")
    assert "ECHO_I human" in md and "per-caption averages" in md
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["all"]["human_echo_i"] == 1 / 4 and "metrics_compat" in summary
    assert (tmp_path / "rep" / "captions_pooled.csv").is_file() and (tmp_path / "rep" / "report.html").is_file()


def _tree_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A small ontology in AudioSet's released shape (Vehicle > Car, Engine > Idling, Dog > Bark) and two clips."""
    tree = [
        {"id": "/m/v", "name": "Vehicle", "child_ids": ["/m/c"], "description": ""},
        {"id": "/m/c", "name": "Car", "child_ids": []},
        {"id": "/m/e", "name": "Engine", "child_ids": ["/m/i"]},
        {"id": "/m/i", "name": "Idling", "child_ids": []},
        {"id": "/m/d", "name": "Dog", "child_ids": ["/m/b"]},
        {"id": "/m/b", "name": "Bark", "child_ids": []},
        {"id": "/m/r", "name": "Rain", "child_ids": []},
    ]
    onto = tmp_path / "ontology.json"
    onto.write_text(json.dumps(tree), encoding="utf-8")
    meta = tmp_path / "generative_data_metadata.csv"
    with meta.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["youtube_id", "caption", "label"])
        w.writerow(["Y1", "['An engine idles while a dog barks']", "['Idling', 'Dog']"])
        w.writerow(["Y2", "['A car drives through the rain']", "['Car', 'Rain']"])
        w.writerow(["Y3", "['A vehicle engine and a bark']", "['Engine', 'Bark', 'Vehicle']"])
    preds = tmp_path / "generative.json"
    preds.write_text(
        json.dumps({"Y1": {"p": "An engine runs and a bark is heard."}, "Y2": {"p": "A vehicle passes in the rain."}}),
        encoding="utf-8",
    )
    return meta, preds, onto


def test_ontology_grounds_less_and_more_specific_objects(tmp_path: Path) -> None:
    meta, preds, onto = _tree_files(tmp_path)
    flat = score_kuan_captions(meta, preds)["metrics"]["all"]
    # Y1 names engine and bark (labels Idling, Dog), Y2 vehicle and rain (labels Car, Rain)
    assert (flat["echo_i"], flat["cover"]) == (3 / 4, 1 / 4)
    r = score_kuan_captions(meta, preds, ontology=onto)
    m = r["metrics"]["all"]
    # engine is above Idling, bark below Dog, vehicle above Car: all grounded; bark covers Dog, rain covers Rain
    assert (m["echo_i"], m["echo_s"], m["cover"]) == (0.0, 0.0, 2 / 4)
    assert r["ontology"] == str(onto) and any(n.startswith("ontology:") for n in r["notes"])


def test_ontology_bad_file_is_one_clear_error(tmp_path: Path) -> None:
    meta, preds, onto = _tree_files(tmp_path)
    onto.write_text(json.dumps([{"id": "/m/v", "name": "Vehicle", "child_ids": "/m/c"}]), encoding="utf-8")
    res = CliRunner().invoke(app, ["score", "captions", str(meta), str(preds), "--ontology", str(onto)])
    assert isinstance(res.exception, InputError)
    assert "child_ids" in str(res.exception) and str(onto) in str(res.exception) and "row 1" in str(res.exception)


@pytest.mark.parametrize(
    ("caption", "vocab", "present"),
    [
        ("Собаки нет, только птицы поют.", ["Собака", "Птица"], {"птица"}),
        ("Без музыки: говорит мужчина, собака не лает.", ["Музыка", "Собака", "Мужчина"], {"мужчина"}),
        ("Ит жоқ, құстар сайрайды.", ["Ит", "Құс"], {"құс"}),
    ],
)
def test_russian_and_kazakh_labels_with_their_negations(caption: str, vocab: list[str], present: set[str]) -> None:
    assert named_objects(caption, vocab) == present


def test_ontology_grounds_llm_phrases(tmp_path: Path) -> None:
    """An LLM's phrase is grounded through the classes it names: "engine noise" by Idling (engine is above it)."""
    from halluscope.closedform.kuan_captions import _ground
    from halluscope.closedform.llmextract import Extraction
    from halluscope.closedform.ontology import Ontology

    _, _, onto = _tree_files(tmp_path)
    row = {"prediction": "An engine hums and a dog barks; a siren wails."}
    ex = Extraction(("engine noise", "dog barking", "siren"), raw='["engine noise", "dog barking", "siren"]')
    vocab = ["Idling", "Dog", "Engine", "Bark", "Siren"]
    _ground(row, ["Idling", "Dog"], vocab, ex, Ontology.load(onto))
    assert row["hallucinated"] == ["siren"] and row["covered"] == ["dog"]
    _ground(row, ["Idling", "Dog"], vocab, ex)  # without the hierarchy the engine is hallucinated too
    assert row["hallucinated"] == ["engine noise", "siren"]


def test_real_audio_lm_answers_name_no_label_by_a_longer_word(realdata: Path) -> None:
    """AudioTrust's real audio-LM answers (160, refusals included) name no donkey, blender or hiss: "assist",
    "blending" and "his" are other words, not forms of those labels."""
    rows = [
        json.loads(x)
        for name in ("content_mismatc.jsonl", "label_mismatch.jsonl")
        for x in (realdata / "audiotrust_hallucination" / name).read_text(encoding="utf-8").splitlines()
        if x.strip()
    ]
    texts = [r["ModelResponse"] for r in rows if r.get("ModelResponse")]
    assert len(texts) > 100 and any("assist" in t for t in texts) and any("blending" in t for t in texts)
    vocab = ["Donkey, ass", "Blender", "Hiss", "Music", "Singing"]
    assert not any(named_objects(t, vocab) & {"donkey, ass", "blender", "hiss"} for t in texts)
    assert sum(bool(named_objects(t, ["Music"])) for t in texts) > 20  # the forms still find what is there


def test_a_refusal_is_counted_apart_not_a_clean_caption(tmp_path: Path) -> None:
    meta, _ = _files(tmp_path)
    preds = tmp_path / "refusing.json"
    preds.write_text(
        json.dumps(
            {
                "Y1": {"p": "A dog barks and a car engine idles."},
                "Y2": {"p": "I'm sorry, but I can't listen to or analyze audio clips."},
            }
        ),
        encoding="utf-8",
    )
    r = score_kuan_captions(meta, preds)
    pooled, compat = r["metrics"]["all"], r["metrics_compat"]["all"]
    # pooled: the refusal is out (one scored caption naming dog, clean); the authors' averaging reads it as naming
    # nothing (-1), as their extraction of a refusal would
    assert (pooled["n_captions"], pooled["unscored"], pooled["refusals"], pooled["echo_s"]) == (2, 1, 1, 0.0)
    assert (compat["refusals"], compat["no_object"], compat["echo_s"]) == (1, 1, -50.0)
    assert next(i for i in r["items"] if i["youtube_id"] == "Y2")["reason"].startswith("refusal:")


@pytest.mark.parametrize(
    ("caption", "present"),
    [
        ("The lyrics mention someone loving the rain.", set()),
        ('She sings "rain, rain, go away" over a piano.', {"piano"}),
        ("A man talks about dogs while a dog barks.", {"dog"}),
        ("A man speaks about the weather as rain falls.", {"rain"}),
        ("A song about the rain plays on a piano.", {"piano"}),
        ("The audio is about a dog barking at a cat.", {"dog", "cat"}),
        ("Someone mentions that the cat can sit by the rain.", set()),  # "that" opens what is said
    ],
)
def test_what_is_said_or_sung_is_not_heard(caption: str, present: set[str]) -> None:
    assert named_objects(caption, ["Rain", "Piano", "Dog", "Cat"]) == present


@pytest.mark.parametrize(
    ("caption", "vocab", "present"),
    [
        ("A driver is honking.", ["Honk", "Honking"], {"honking"}),  # the same word before the same lemma
        ("Occasional mouse clicks.", ["Mouse", "Mice", "Click", "Clicking"], {"mouse", "click"}),
        ("The piano is nowhere to be heard; a guitar plays.", ["Piano", "Guitar"], {"guitar"}),
        ("I was unable to detect any thunder.", ["Thunder"], set()),
        ("A helicopter is flying overhead.", ["Fly", "Helicopter"], {"helicopter"}),  # flying is no insect
    ],
)
def test_the_closest_spelling_and_the_shared_negation(caption: str, vocab: list[str], present: set[str]) -> None:
    """One reading whatever the hash seed: where two labels fit a word, the one spelled as the caption spells it."""
    assert named_objects(caption, vocab) == present
