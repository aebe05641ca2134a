"""'score <benchmark> FILES --reader llm:openai/<m> --report DIR', as a user types it, for every closed-form
benchmark and file shape (HalluAudio needing --domain, AHa-Bench with two run files, Kuan et al.'s yes/no files,
AudioTrust, AVHBench), against the scripted loopback server. The server answers in every shape a model writes
(JSON, fenced JSON, "Label: no", "The reply is a yes.", a bare word), each must be read, the schema must reach the
server, every call must be in the store, and the report folder must hold the reader's tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from halluscope.cli.main import app
from halluscope.closedform.llmreader import classes
from halluscope.core.store import Store
from support.chat_server import ChatServer, Reply, user_text
from support.closedform_files import write_aha, write_yesno
from support.corpus_fixtures import write_jsonl

runner = CliRunner()
SHAPES = (  # each shape, and how the reader reads it
    ('{{"label": "{}"}}', "json"),
    ('```json\n{{"label": "{}"}}\n```', "json"),
    ("Label: {}", "keyed"),
    ("The reply is a {}.", "word"),
    ("{}", "word"),
)


def intended(reply: str) -> str:
    """The class the scripted reader model gives a reply (a crude reading: what matters is that it is read back)."""
    low = reply.lower()
    if re.search(r"\b(sorry|cannot|can't|unable)\b", low):
        return "refusal"
    if re.search(r"don't know|not sure", low):
        return "unknown"
    if re.match(r"\s*no\b", low) or re.search(r"\bthere is no\b|\bnobody\b|\bisn't\b", low):
        return "no"
    if re.match(r"\s*(yes|sí)\b", low) or "barking" in low or "snoring" in low or "jazz" in low:
        return "yes"
    return "unrelated"


def reply_of(req: dict) -> str:
    return user_text(req).split("Reply: ", 1)[1].split("\n\nClasses:", 1)[0]


def script(req: dict, n: int) -> Reply:
    reply = reply_of(req)
    return Reply(content=SHAPES[len(reply) % len(SHAPES)][0].format(intended(reply)))


def _run(args: list[str], monkeypatch, server_script=script) -> tuple[object, ChatServer]:
    with ChatServer(server_script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        res = runner.invoke(app, [*args, "--reader", "llm:openai/reader-m"])
    return res, srv


def _check(res, srv: ChatServer, report: Path, store: Path, n: int, *, view: bool) -> dict:
    assert res.exit_code == 0, (res.output, res.exception)
    assert srv.count == len(srv.per_prompt) <= n  # one call per distinct prompt (identical ones share it)
    for req in srv.requests:  # the reader's schema reached the server, its enum the rules' classes
        fmt = req["response_format"]
        assert fmt["type"] == "json_schema"
        assert fmt["json_schema"]["schema"]["properties"]["label"]["enum"] == list(classes())
    with Store(store, create=False, lock=False) as s:  # every call kept raw, before it was read
        calls = list(s.calls())
    assert len(calls) == srv.count and all(json.loads(c["response"])["body"] for c in calls)
    md = (report / "tables.md").read_text(encoding="utf-8")
    assert "Reader sensitivity: rules vs llm:openai/reader-m" in md and f"read {n} of {n} replies" in md
    assert (report / "report.html").is_file() and (report / "reader_sensitivity.csv").is_file()
    assert (report / "view" / "index.html").is_file() == view
    assert f"the LLM reader read {n} of {n}" in " ".join(res.output.split())
    return json.loads((report / "summary.json").read_text(encoding="utf-8"))


def _every_reply_read_as_meant(items: list[dict], replies: dict[str, str]) -> None:
    assert {i["id"]: i["llm"] for i in items} == {k: intended(r) for k, r in replies.items()}
    assert {i["id"]: i["how"] for i in items} == {k: SHAPES[len(r) % len(SHAPES)][1] for k, r in replies.items()}
    assert len({i["how"] for i in items}) > 1


def test_halluaudio_file_that_needs_domain(tmp_path: Path, monkeypatch) -> None:
    rows = [  # a binary subset the official scripts do not know and no per-row domain: --domain says it
        {"id": f"b{k}", "audio": f"{k}.wav", "prompt": q, "reference": ref, "subset": "my_binary", "pred": p}
        for k, (q, ref, p) in enumerate(
            [
                ("Is there a dog barking?", "yes", "Yes, a dog is barking loudly."),
                ("Is there a dog barking?", "no", "No."),
                ("Is there a siren?", "no", "Sorry, I cannot process audio."),
                ("Is there a cat?", "yes", "I don't know."),
                ("Is there a bell?", "no", "There is no bell, only wind."),
                ("Is there a car?", "yes", "A woman is talking."),
            ]
        )
    ]
    f = write_jsonl(tmp_path / "binary.jsonl", rows)
    bare = runner.invoke(app, ["score", "halluaudio", str(f), "--bootstrap", "0"])
    assert bare.exit_code != 0  # without --domain the file cannot be scored: the reader must not hide that
    rep = tmp_path / "rep"
    res, srv = _run(
        ["score", "halluaudio", str(f), "--domain", "sound", "--bootstrap", "0", "--report", str(rep)], monkeypatch
    )
    summary = _check(res, srv, rep, tmp_path / "binary.jsonl.reader", len(rows), view=True)
    _every_reply_read_as_meant(summary["tables"]["reader_items"], {r["id"]: r["pred"] for r in rows})


def test_aha_with_two_run_files(tmp_path: Path, monkeypatch) -> None:
    files = write_aha(tmp_path / "run_0.jsonl", tmp_path / "run_1.jsonl")  # the README's example
    rep = tmp_path / "rep"
    res, srv = _run(["score", "aha", *map(str, files), "--bootstrap", "0", "--report", str(rep)], monkeypatch)
    summary = _check(res, srv, rep, tmp_path / "run_0.jsonl.reader", 8, view=True)  # the yes/no items of both runs
    assert {i["run"] for i in summary["tables"]["reader_items"]} == {"run_0", "run_1"}
    index = (rep / "view" / "data" / "index.js").read_text(encoding="utf-8")
    assert "run_0" in index and "run_1" in index  # the viewer beside the report holds both runs' items
    assert srv.count < 8  # 'No.' to the same question in both runs: asked once


def test_kuan_yesno_files(tmp_path: Path, monkeypatch) -> None:
    q, p = write_yesno(tmp_path / "questions.txt", tmp_path / "preds.csv")
    rep = tmp_path / "rep"
    res, srv = _run(["score", "yesno", str(q), str(p), "--bootstrap", "0", "--report", str(rep)], monkeypatch)
    summary = _check(res, srv, rep, tmp_path / "preds.csv.reader", 6, view=True)
    llm = summary["tables"]["reader_sensitivity"][1]
    assert llm["unread"] == 0 and llm["accuracy"] is not None


def _audiotrust(tmp_path: Path) -> tuple[list[Path], dict[str, str]]:
    answers = {
        "content_mismatc.jsonl": ["Yes, this is jazz music with a saxophone.", "Sorry, I cannot listen to audio."],
        "label_mismatch.jsonl": ["No, it is a man reading the news.", "The recording has a slow tempo."],
    }
    files, replies = [], {}
    for name, said in answers.items():
        subset = "content_mismatch" if name.startswith("content") else "label_mismatch"
        rows = [
            {
                "WavPath1": f"data/{k}.wav",
                "overall_description": "jazz",
                "General_description": "A kind of music",
                "ModelResponse": r,
            }
            for k, r in enumerate(said)
        ]
        files.append(write_jsonl(tmp_path / name, rows))
        replies.update({f"{subset}:{k + 1}": r for k, r in enumerate(said)})
    return files, replies


def test_audiotrust(tmp_path: Path, monkeypatch) -> None:
    files, replies = _audiotrust(tmp_path)
    rep = tmp_path / "rep"
    res, srv = _run(["score", "audiotrust", *map(str, files), "--report", str(rep)], monkeypatch)
    summary = _check(res, srv, rep, tmp_path / "content_mismatc.jsonl.reader", 4, view=False)
    _every_reply_read_as_meant(summary["reader"]["reader_items"], replies)
    llm = summary["reader"]["reader_sensitivity"][1]
    assert llm["accuracy"] is None and llm["bias"] is None  # AudioTrust has no yes/no answer key


def test_audiotrust_real_files(realdata: Path, tmp_path: Path, monkeypatch) -> None:
    files = sorted((realdata / "audiotrust_hallucination").glob("*.jsonl"))
    rep = tmp_path / "rep"
    store = tmp_path / "store"
    res, srv = _run(
        ["score", "audiotrust", *map(str, files), "--report", str(rep), "--reader-store", str(store)], monkeypatch
    )
    summary = _check(res, srv, rep, store, 160, view=False)
    assert summary["reader"]["reader_summary"][0]["read"] == 160


def test_avhbench(tmp_path: Path, monkeypatch) -> None:
    objs = [
        ("Video-driven Audio Hallucination", "Is the sleeping man making sound in the audio?", "Yes", "Yes, snoring."),
        (
            "Video-driven Audio Hallucination",
            "Is the couch making sound in the audio?",
            "No",
            "No, the couch is silent.",
        ),
        ("Audio-driven Video Hallucination", "Is the person walking visible in the video?", "No", "Nobody walks."),
        ("AV Matching", "Are the contexts of audio and visual content matching?", "Yes", "I don't know."),
    ]
    f = tmp_path / "00191.json"
    f.write_text(
        json.dumps(
            [{"video_id": "00191", "task": t, "text": q, "label": lab, "prediction": p} for t, q, lab, p in objs]
        ),
        encoding="utf-8",
    )
    rep = tmp_path / "rep"
    res, srv = _run(["score", "avhbench", str(f), "--report", str(rep)], monkeypatch)
    summary = _check(res, srv, rep, tmp_path / "00191.json.reader", 4, view=False)
    items = summary["reader"]["reader_items"]
    assert [i["llm"] for i in items] == [intended(p) for *_, p in objs]


def test_a_reader_that_reads_nothing_says_so_and_fails(tmp_path: Path, monkeypatch) -> None:
    files = write_aha(tmp_path / "run_0.jsonl", tmp_path / "run_1.jsonl")
    res, srv = _run(
        ["score", "aha", *map(str, files), "--bootstrap", "0", "--report", str(tmp_path / "rep")],
        monkeypatch,
        lambda req, n: Reply(content="I am a small model and I like audio."),
    )
    assert res.exit_code != 0 and srv.count > 0
    text = " ".join(res.output.split()) + str(res.exception)
    assert "read none of the 8 yes/no replies" in text and "bias=0.000" not in text
    assert not (tmp_path / "rep" / "tables.md").exists()


@pytest.mark.parametrize(
    "refusal",
    [
        Reply(status=400, body='{"error": {"message": "response_format is not supported"}}'),
        Reply(status=422, body='{"detail": [{"loc": ["body", "response_format", "type"], "msg": "unexpected value"}]}'),
    ],
)
def test_a_server_without_response_format_is_asked_again_without_it(tmp_path: Path, monkeypatch, refusal) -> None:
    def no_schema(req: dict, n: int) -> Reply:
        return refusal if "response_format" in req else script(req, n)

    q, p = write_yesno(tmp_path / "questions.txt", tmp_path / "preds.csv")
    res, srv = _run(["score", "yesno", str(q), str(p), "--bootstrap", "0", "--json"], monkeypatch, no_schema)
    assert res.exit_code == 0, (res.output, res.exception)
    s = json.loads(res.stdout)["tables"]["reader_summary"][0]
    assert s["read"] == 6 and "6 request(s) refused it" in s["structured"]
    assert srv.count == 12 and sum("response_format" not in r for r in srv.requests) == 6


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ('{"label": "no"}', "no"),
        ("The reply is a yes.", "yes"),
        ("Label: no", "no"),
        ("label = refusal", "refusal"),
        ('Sure! ```json\n{"label": "unknown"}\n```', "unknown"),
        ("**Answer:** uncertain", "unknown"),
        ("Other.", "unrelated"),
        ("yes", "yes"),
        ("The reply answers the question: no.", "no"),
        ('{"label": "maybe"} yes', "yes"),  # a label outside the classes: the word beside it decides
        ("yes or no", "unparsable"),  # two competing class words
        ("I like audio.", "unparsable"),
        ("", "unparsable"),
    ],
)
def test_any_reply_shape_is_read(raw: str, label: str) -> None:
    from halluscope.closedform.llmreader import parse

    r = parse(raw)
    assert r.label == label, (raw, r)
    assert (r.error is None) == (label != "unparsable")


def test_the_viewer_spec_takes_several_run_files(tmp_path: Path) -> None:
    """'view RUN --closedform aha=RUN0,RUN1' (the spec the report's viewer was exported from) reads both runs."""
    from halluscope.view.closedform import load_closedform

    files = write_aha(tmp_path / "run_0.jsonl", tmp_path / "run_1.jsonl")
    rows = load_closedform([f"aha={files[0]},{files[1]}"])
    assert {row["models"][0] for row, _ in rows} == {"run_0", "run_1"} and len(rows) == 10


def test_caption_extractor_asks_for_its_schema(tmp_path: Path, monkeypatch) -> None:
    """'score captions --extractor llm:openai/<m>': the objects' schema reaches the server, an answer shaped by it
    ({"objects": [...]}) is read, and a server that refuses schemas is asked again without one."""
    import csv

    from halluscope.closedform.kuan_captions import score_kuan_captions
    from halluscope.closedform.llmextract import LLMExtractor

    meta = tmp_path / "generative_data_metadata.csv"
    with meta.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["youtube_id", "caption", "label"])
        w.writerow(["Y1", "['A dog barks']", "['Dog']"])
    preds = tmp_path / "generative.json"
    preds.write_text(json.dumps({"Y1": {"Describe the audio.": {"prediction": "A dog barks, a siren wails."}}}))

    def script(req: dict, n: int) -> Reply:
        caption = user_text(req).split("Description: ", 1)[1]
        if "response_format" in req and "siren" in caption:  # this server knows no schemas for the model's captions
            return Reply(status=400, body='{"error": {"message": "unknown field response_format"}}')
        return Reply(content=json.dumps({"objects": ["dog barking", "siren"] if "siren" in caption else ["dog"]}))

    with ChatServer(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        r = score_kuan_captions(meta, preds, extractor=LLMExtractor("openai/extract-m", tmp_path / "store"))
    schemas = [q["response_format"]["json_schema"]["schema"] for q in srv.requests if "response_format" in q]
    assert schemas and all(s["properties"]["objects"]["type"] == "array" for s in schemas)
    assert sum("response_format" not in q for q in srv.requests) == 1  # the refused one, asked again
    assert r["metrics"]["all"]["n_captions"] == 1 and r["metrics"]["all"]["unscored"] == 0
    assert r["metrics"]["all"]["objects_named"] == 2  # dog barking (Dog) and siren (hallucinated)


@pytest.mark.slow
def test_kuan_real_files(realdata: Path, tmp_path: Path, monkeypatch) -> None:
    """Kuan et al.'s 2,871 released questions with real Qwen2.5-Omni replies, every one read by the LLM reader."""
    d = realdata / "kuan_object_hallucination"
    rep, store = tmp_path / "rep", tmp_path / "store"
    args = ["score", "yesno", str(d / "balanced_merged_test_2871.txt")]
    args += [str(d / "qwen25omni_predictions_balanced_merged_2871_cosine_lambda0.05.csv"), "--compat"]
    res, srv = _run([*args, "--bootstrap", "0", "--report", str(rep), "--reader-store", str(store)], monkeypatch)
    summary = _check(res, srv, rep, store, 2871, view=True)
    assert summary["tables"]["reader_summary"][0]["read"] == 2871


def test_avhbench_released_qa_file(tmp_path: Path, monkeypatch) -> None:
    """v1's one QA file (qa_final_single_filtered.json: v1 task names, several videos, an object with no reply)."""
    objs = [
        ("02060", "AV Hallucination (Audio)", "Is the street making sound in the audio?", "No", "No, it is silent."),
        ("02060", "AV Hallucination (Video)", "Is the car visible in the video?", "Yes", "Yes, a red car."),
        ("01162", "AV Matching", "Are the contexts of audio and visual content matching?", "No", "I don't know."),
        ("01630", "AV Hallucination (Audio)", "Is the man making sound in the audio?", "Yes", None),
    ]
    rows = [
        {"video_id": v, "task": t, "text": q, "label": lab, **({"prediction": p} if p else {})}
        for v, t, q, lab, p in objs
    ]
    f = tmp_path / "qa_final_single_filtered.json"
    f.write_text(json.dumps(rows), encoding="utf-8")
    rep = tmp_path / "rep"
    res, srv = _run(["score", "avhbench", str(f), "--report", str(rep)], monkeypatch)
    summary = _check(res, srv, rep, tmp_path / "qa_final_single_filtered.json.reader", 3, view=False)
    assert [i["llm"] for i in summary["reader"]["reader_items"]] == [intended(p) for *_, p in objs if p]
    assert "Problems in the input: 1" in (rep / "tables.md").read_text(encoding="utf-8")
