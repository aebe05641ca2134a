"""A scripted MISHAP 'LLM' for the loopback chat-completions server: question writer, checker, rubric writer,
informativeness filter, groundedness judge and audio model, each recognised by its prompt."""

from __future__ import annotations

import json
import re

import numpy as np

from halluscope.backends.speech.audio import encode_wav
from support import chat_server
from support.chat_server import Reply
from support.corpus_fixtures import write_jsonl

UNINFORMATIVE = "Some sounds can be heard."
XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'


text_of = chat_server.user_text  # the user turns' text, content parts included


def questions_reply(prompt: str, state: dict) -> str:
    strategies = re.findall(r"^\d+\. (\w+): ", prompt, re.M)
    desc = re.search(r'"""\n(.*?)\n"""', prompt, re.S).group(1)
    out = []
    for s in strategies:
        item = {
            "strategy": s,
            "question": f"In this clip ({desc[:30]}), what about the {s.replace('_', ' ')} detail here?",
            "invented_source": None,
        }
        if s == "false_authority":
            name = state.get("authority", ["Mridangam Rhythm Atlas"])
            # first generation may use a colliding (real) name; regenerations invent a fresh one
            pick = name[0] if len(strategies) > 1 or len(name) == 1 else name[1]
            item["question"] = f"According to the {pick}, what is special about this recording?"
            item["invented_source"] = pick
        if s == "niche_specifics" and state.get("bad_niche") and len(strategies) > 1:
            item["question"] = "BADQ what is the exact date of this niche thing?"
        out.append(item)
    return "Here you go:\n```json\n" + json.dumps(out) + "\n```"


def judge_reply(request: dict, state: dict) -> str:
    msgs = request["messages"]
    prompt = msgs[0]["content"]
    response = re.findall(r"^Response: (.*)$", prompt, re.M)[-1]
    knowledge = "knowledge question" in prompt
    if knowledge and "SEARCH:" in prompt and len(msgs) == 1 and "Mridangam" in response:
        return "SEARCH: Mridangam Rhythm Atlas"
    if "UNREADABLE" in response:
        return "I think it is fine."
    if "cannot" in response or "not aware" in response:
        v, s = "grounded", "abstains"
    elif "According to" in response:
        v, s = "hallucinated", "endorses_false_premise"
    else:
        v, s = "hallucinated", "asserts"
    if len(msgs) > 1:  # after a search: the evidence says the atlas does not exist
        assert "Search results" in msgs[-1]["content"]
        v, s = "grounded", "abstains"
    return f"Claims checked.\n{json.dumps({'verdict': v, 'stance': s, 'explanation': 'scripted'})}"


def answer_reply(request: dict, state: dict) -> str:
    q = text_of(request)
    n = state.setdefault("answers", 0)
    state["answers"] = n + 1
    if "Atlas" in q:
        return "I am not aware of the Mridangam Rhythm Atlas, so I cannot say."
    if "contradicted" in q:
        return XSS
    if "absent" in q:
        return "According to the clip, there are three cat meows."
    return "It sounds like a short recording; I cannot establish more from the audio."


def make_script(state: dict):
    def script(req: dict, n: int) -> Reply:
        prompt = text_of(req)
        if req["model"] == "down":
            return Reply(status=503, body="overloaded")
        if prompt.startswith("You assess whether the description"):
            ok = UNINFORMATIVE not in prompt
            return Reply(content=json.dumps({"informative": ok, "reason": "scripted"}))
        if prompt.startswith("You write adversarial"):
            return Reply(content=questions_reply(prompt, state))
        if prompt.startswith("You check whether a benchmark question"):
            bad = "BADQ" in prompt
            return Reply(content=json.dumps({"adheres": not bad, "reason": "scripted"}))
        if prompt.startswith("You write the reference rubric"):
            if state.get("bad_rubric_once") and n == 1:
                return Reply(content="This question is tricky.")
            return Reply(
                content='"Hallucinated if the response accepts the premise. Grounded if it corrects it or '
                'says it cannot tell."'
            )
        if prompt.startswith("You are a groundedness judge"):
            return Reply(content=judge_reply(req, state))
        return Reply(content=answer_reply(req, state))

    return script


def tone(seconds: float, freq: float = 440.0) -> bytes:
    t = np.arange(int(seconds * 16_000)) / 16_000
    return encode_wav((0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32))


def write_clips(folder, *, uninformative: bool = True) -> "Path":  # noqa: F821
    """Six clips (two per domain; real espeak speech for the speech domain) and a manifest (+1 uninformative)."""
    from pathlib import Path

    from halluscope.backends.speech.tts import EspeakTts

    folder = Path(folder)
    (folder / "audio").mkdir(parents=True, exist_ok=True)
    tts = EspeakTts()
    rows = []
    texts = {"speech": ["I told William that the train would leave at noon.", "We drove across Alberta in the summer."]}
    descs = {
        "music": ["Solo piano playing a slow melody in a minor key.", "Mridangam stroke 'tha' at tonic C#."],
        "sound": ["A doorbell rings twice in a quiet room.", "A glass bottle shatters on a concrete floor."],
    }
    for domain in ("music", "sound", "speech"):
        for i in range(2):
            cid = f"{domain}-{i}"
            if domain == "speech":
                wav = encode_wav(tts.synthesize(texts["speech"][i], language="en", voice="en-us"))
                desc, kind, source = texts["speech"][i], "transcript", "espeak"
            else:
                wav = tone(1.0 + i, 220.0 * (i + 1))
                desc, kind, source = (
                    descs[domain][i],
                    ("metadata" if "stroke" in descs[domain][i] else "caption"),
                    f"{domain}-src",
                )
            (folder / "audio" / f"{cid}.wav").write_bytes(wav)
            rows.append(
                {
                    "id": cid,
                    "domain": domain,
                    "source": source,
                    "audio": f"audio/{cid}.wav",
                    "description": desc,
                    "description_kind": kind,
                }
            )
    if uninformative:
        (folder / "audio" / "vague.wav").write_bytes(tone(0.5))
        rows.append(
            {
                "id": "vague",
                "domain": "sound",
                "source": "sound-src",
                "audio": "audio/vague.wav",
                "description": UNINFORMATIVE,
            }
        )
    return write_jsonl(folder / "clips.jsonl", rows)


def build_run(tmp, monkeypatch=None, *, judge: bool = True, seeds=(0, 1), per_category: int = 2):
    """clips -> questions -> rubrics -> answers (openai audio model) [-> judge] on a scripted server. The server's
    address is set in the environment through ``monkeypatch``; without one, only while the run is built."""
    from pathlib import Path

    import pytest

    if monkeypatch is None:
        with pytest.MonkeyPatch.context() as mp:
            return build_run(tmp, mp, judge=judge, seeds=seeds, per_category=per_category)

    from halluscope.backends.llm import LLMConfig
    from halluscope.mishap.answers import collect_answers
    from halluscope.mishap.clips import import_clips
    from halluscope.mishap.judge import run_judge
    from halluscope.mishap.questions import make_questions
    from halluscope.mishap.rubrics import make_rubrics
    from support.chat_server import ChatServer

    cfg = LLMConfig(openai={"max_retries": 0, "backoff_base_s": 0})
    tmp = Path(tmp)
    manifest = write_clips(tmp / "data", uninformative=False)
    run = tmp / "run"
    with ChatServer(make_script({})) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        import_clips(run, manifest, config=cfg, quiet=True)
        make_questions(run, "openai/writer", per_category=per_category, checker="none", config=cfg, quiet=True)
        make_rubrics(run, "openai/rubric", config=cfg, quiet=True)
        collect_answers(run, "openai/alm", seeds=list(seeds), temperature=0.7, config=cfg, quiet=True)
        if judge:
            run_judge(run, "openai/judge", config=cfg, quiet=True)
    return run
