"""The App. A.4 LLM cleaner on the loopback chat server with the real openai client: batches, a batch that
fails to parse and is split, single-item calls, every call in the store, and 'score asr --cleaner llm'."""

import json
import re

import pytest
from typer.testing import CliRunner

from halluscope.backends.llm import LLMConfig, create_backend  # noqa: E402
from halluscope.cli.main import app  # noqa: E402
from halluscope.core.store import Store  # noqa: E402
from halluscope.metrics.asr import normalize_for_wer, score_asr  # noqa: E402
from halluscope.spoken.asr_clean import LLMCleaner, cleaner_prompt, cleaning_problem, read_jsonl  # noqa: E402
from support.chat_server import ChatServer, Reply  # noqa: E402

FAST = {"timeout_s": 5.0, "backoff_base_s": 0.01, "backoff_max_s": 0.05, "max_retries": 0}


def model_clean(text: str) -> str:
    """The scripted model's cleaning: noise tags, timestamps, punctuation out, lowercase, but it KEEPS digits
    (unlike the rules), so a figure computed from its output differs from the rule-based one."""
    text = re.sub(r"\[\w+\]|\d\d:\d\d:\d\d", " ", text)
    return " ".join(re.sub(r"[^\w\s]|_", " ", text.lower()).split())


def make_script(fail: set[int] = frozenset(), always_fail_batches_of: int | None = None):
    """Batched calls answer JSONL; the n-th batched call (1-based) in ``fail`` answers prose instead."""
    seen = {"batched": 0}

    def script(req, n):
        system, user = req["messages"][0]["content"], req["messages"][1]["content"]
        if system == cleaner_prompt("single"):
            return Reply(content=model_clean(user) + "\n")
        assert system == cleaner_prompt("batched"), system
        seen["batched"] += 1
        items = [json.loads(line) for line in user.splitlines()]
        if seen["batched"] in fail or len(items) == always_fail_batches_of:
            return Reply(content="Sure! Here are the cleaned transcripts:\n" + ", ".join(i["text"] for i in items))
        return Reply(
            content="```jsonl\n"
            + "\n".join(
                json.dumps({"idx": i["idx"], "cleaned": model_clean(i["text"])}, ensure_ascii=False) for i in items
            )
            + "\n```"
        )

    return script


REF = ["About 300 people (mostly students) joined.", "Astana (Kazinform) - rates rose."]
HYP = ["[music] about three hundred people mostly students joined", "astana kazinform rates rose 00:00:01"]


def test_prompts_are_app_a4_verbatim():
    single, batched = cleaner_prompt("single"), cleaner_prompt("batched")
    assert single.startswith("Clean ASR transcript for WER/CER evaluation.\n")
    assert (
        "- Remove punctuation, quotes, brackets, noise tokens ([music], <unk>), timestamps (e.g., 00:01:23).\n"
        in single
    )
    assert single.rstrip().endswith("Return ONLY cleaned text.")
    assert batched.startswith("You clean ASR transcripts for fair WER/CER evaluation.\n")
    assert "- Do NOT add new content, do NOT paraphrase, do NOT translate.\n" in batched
    assert "- Remove punctuation, noise tokens and timestamps (e.g., 00:01:23).\n" in batched
    assert "Return ONLY JSONL: one JSON object per line, no surrounding array, no markdown.\n" in batched
    assert batched.rstrip().endswith('{"idx": <int>, "cleaned": "<string>"}')
    assert "- Remove all digits." in single and "{DIGITS RULE}" not in batched


def test_read_jsonl_needs_every_idx_once():
    assert read_jsonl('{"idx": 1, "cleaned": "b"}\n{"idx": 0, "cleaned": "a"}', 2) == ({0: "a", 1: "b"}, None)
    assert read_jsonl('```jsonl\n{"idx": 0, "cleaned": "a b"}\n```', 1) == ({0: "a b"}, None)
    assert read_jsonl('{"idx": 0, "cleaned": "a"}', 2)[1] == "idx [0] given, expected 0..1"
    assert read_jsonl("Sure! here they are: a, b", 2)[1] == "no JSON object in the reply"
    assert "twice" in read_jsonl('{"idx": 0, "cleaned": "a"}\n{"idx": 0, "cleaned": "a"}', 1)[1]
    assert "lacks idx (int)" in read_jsonl('{"idx": "0", "cleaned": "a"}', 1)[1]


def test_a_batch_that_fails_to_parse_is_split_and_every_call_is_stored(tmp_path):
    with ChatServer(make_script(fail={1})) as srv:
        backend = create_backend("openai/cleaner", config=LLMConfig(), base_url=srv.url, **FAST)
        with Store(tmp_path / "run") as store:
            llm = LLMCleaner(backend, store, batch_size=4)
            score = score_asr(reference=REF, hypothesis=HYP, cleaner=llm)
            # one batch of four answered in prose, split into two batches of two that read
            assert srv.count == 3 and llm.stats.batches == 3 and llm.stats.splits == 1 and llm.stats.singles == 0
            assert sorted(len(r["messages"][1]["content"].splitlines()) for r in srv.requests) == [2, 2, 4]
            calls = list(store.calls())
            assert len(calls) == 3 and all(c["status"] == "ok" for c in calls)
            assert any("Sure! Here are" in json.dumps(c["response"]) for c in calls)  # the failed reply, stored raw
            # the model kept digits: ref 'about 300 people mostly students joined' vs hyp 'about three hundred
            # people ...': 1 substitution + 1 insertion; pair 2 identical; 2 edits over 6 + 4 = 10 words
            assert score.cleaner == "llm:openai/cleaner" and score.wer == pytest.approx(2 / 10)
            assert score_asr(reference=REF, hypothesis=HYP).wer == pytest.approx(2 / 9)  # the rules drop '300'
            # a new cleaner on the same store asks nothing: every reply comes from the store
            again = LLMCleaner(backend, store, batch_size=4)
            assert score_asr(reference=REF, hypothesis=HYP, cleaner=again) == score and srv.count == 3
            assert again.calls.from_store == 3 and again.calls.calls == 0


def test_batches_that_never_parse_end_in_single_item_calls(tmp_path):
    with ChatServer(make_script(always_fail_batches_of=2)) as srv:
        backend = create_backend("openai/cleaner", config=LLMConfig(), base_url=srv.url, **FAST)
        with Store(tmp_path / "run") as store:
            llm = LLMCleaner(backend, store, batch_size=2)
            out = llm.clean(["Hello, World!", "A-b c.", "", "Hello, World!"])
    assert out == ["hello world", "a b c", "", "hello world"]  # the empty string is never sent
    assert (llm.stats.batches, llm.stats.splits, llm.stats.singles) == (1, 1, 2) and srv.count == 3


def test_score_asr_cli_says_which_cleaner_made_each_figure(tmp_path, monkeypatch):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(json.dumps({"reference": r, "hypothesis": h, "language": "en"}) + "\n" for r, h in zip(REF, HYP)),
        encoding="utf-8",
    )
    cfg = tmp_path / "llm.json"
    cfg.write_text(json.dumps({"openai": FAST}))
    monkeypatch.setenv("HALLUSCOPE_LLM_CONFIG", str(cfg))
    runner = CliRunner()
    rules = json.loads(runner.invoke(app, ["score", "asr", str(pairs), "--json"]).stdout)
    assert {r["cleaner"] for r in rules.values()} == {"rules"}
    with ChatServer(make_script()) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        res = runner.invoke(
            app,
            [
                "score",
                "asr",
                str(pairs),
                "--json",
                "--cleaner",
                "llm",
                "--model",
                "openai/cleaner",
                "--store",
                str(tmp_path / "calls"),
            ],
        )
        assert res.exit_code == 0, res.output
        assert srv.count == 1  # four texts, one batch; the overall figure reuses the per-language cleaning
    out = json.loads(res.stdout)
    assert {r["cleaner"] for r in out.values()} == {"llm:openai/cleaner"}
    assert out["en"]["wer"] == pytest.approx(2 / 10) and rules["en"]["wer"] == pytest.approx(2 / 9)
    assert len(list(Store(tmp_path / "calls").calls())) == 1
    bad = runner.invoke(app, ["score", "asr", str(pairs), "--cleaner", "llm"])
    assert bad.exit_code != 0 and "--cleaner llm --model openai/<model>" in str(bad.exception)  # exit 2 via main()


# ---- the reply must be a cleaning of the text it was given ------------------------------------------------------

TRANSCRIPTS = [
    "The National Bank lowered its base rate to 14.75 percent on Friday, after inflation slowed.",
    "Governor Timur Sultanov told reporters in Astana that food and service prices grew more slowly.",
    "KazMunayGas reported on April 15 that oil output rose by three percent in the first quarter of the year.",
    "[music] The regulator also said it sold foreign currency from the National Fund in January.",
]
UNRELATED = "Heavy snow closed the mountain pass near Almaty for the second day, the emergency ministry said."


def answers(text: str) -> str:
    """The scripted model: a genuine cleaning (digits kept, which the check tolerates) of the first transcript, 'ok'
    to the second, an unrelated sentence to the third, the first half of a cleaning to the fourth."""
    i = TRANSCRIPTS.index(text)
    cleaned = model_clean(text)
    return [cleaned, "ok", UNRELATED, " ".join(cleaned.split()[: len(cleaned.split()) // 2])][i]


def checked_script(req, n):
    system, user = req["messages"][0]["content"], req["messages"][1]["content"]
    if system == cleaner_prompt("single"):
        return Reply(content=answers(user))
    items = [json.loads(line) for line in user.splitlines()]
    return Reply(content="\n".join(json.dumps({"idx": i["idx"], "cleaned": answers(i["text"])}) for i in items))


@pytest.mark.parametrize("batch_size", [1, 4])
def test_a_reply_that_is_no_cleaning_of_its_text_falls_back_to_the_rules_and_is_counted(tmp_path, batch_size):
    with ChatServer(checked_script) as srv:
        backend = create_backend("openai/cleaner", config=LLMConfig(), base_url=srv.url, **FAST)
        with Store(tmp_path / "run") as store:
            llm = LLMCleaner(backend, store, batch_size=batch_size)
            out = llm.clean(TRANSCRIPTS)
    rules = [normalize_for_wer(t) for t in TRANSCRIPTS]
    assert out[1:] == rules[1:]  # 'ok', the unrelated sentence and the half: the rules' cleaning instead
    assert out[0] == model_clean(TRANSCRIPTS[0]) and out[0] != rules[0]  # the genuine cleaning is the model's
    assert llm.stats.fallbacks == 3 and set(llm.fallbacks) == set(TRANSCRIPTS[1:])
    assert "keeps 0% of the text's" in llm.fallbacks[TRANSCRIPTS[1]]
    assert int(re.match(r"keeps (\d+)%", llm.fallbacks[TRANSCRIPTS[2]]).group(1)) < 20  # 'the', 'said' in both
    assert "length ratio 0.5" in llm.fallbacks[TRANSCRIPTS[3]]  # the half keeps its words but half of them
    assert llm.fell_back([TRANSCRIPTS[1], TRANSCRIPTS[1], TRANSCRIPTS[0]]) == 2  # counted per text occurrence


def test_a_model_answering_ok_never_gives_wer_zero(tmp_path):
    ref = ["The bank raised the rate.", "Prices rose in March."]
    hyp = ["the bank raced the rate", "prices rows in march"]
    with ChatServer(lambda req, n: Reply(content="ok")) as srv:
        backend = create_backend("openai/cleaner", config=LLMConfig(), base_url=srv.url, **FAST)
        with Store(tmp_path / "run") as store:
            score = score_asr(reference=ref, hypothesis=hyp, cleaner=LLMCleaner(backend, store, batch_size=1))
    rules = score_asr(reference=ref, hypothesis=hyp)
    assert score.wer == rules.wer and score.wer > 0  # every text cleaned by the rules, not read as 'ok' = 'ok'
    assert score.cleaner_fallbacks == 4 and score.as_dict()["cleaner_fallbacks"] == 4
    assert rules.cleaner_fallbacks is None and "cleaner_fallbacks" not in rules.as_dict()


@pytest.mark.parametrize(
    ("text", "reply", "ok"),
    [
        ("Hello, World!", "hello world", True),
        ("About 300 people joined.", "about 300 people joined", True),  # digits kept: the rules drop them in both
        ("[music]", "", True),  # nothing to keep, nothing kept
        ("[music]", "music", False),
        ("Hello, World!", "", False),
        ("Yes.", "ok", False),
        ("Ok.", "ok", True),
        ("one two three four five six seven eight nine ten", "one two three four five six seven eight", True),
        ("one two three four five six seven eight nine ten", "one two three four five six seven", False),
        ("one two three four", "one two three four and then some more", False),  # added words
    ],
)
def test_cleaning_problem(text, reply, ok):
    assert (cleaning_problem(text, reply) is None) is ok, cleaning_problem(text, reply)
