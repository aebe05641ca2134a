"""Typed keys (core/keys.py): each decodes what it encodes for any ids, separators included; each writes the
strings stored before the types existed byte for byte; the keys of a stored run decode."""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

import pytest
from hypothesis import example, given, strategies as st

from halluscope.core.errors import HalluscopeError
from halluscope.core.keys import (
    STAGE_MARKS,
    AnswerKey,
    AudioKey,
    ClosedFormItemKey,
    DetectRunKey,
    StageName,
    YesNoItemKey,
)
from halluscope.core.records import RunManifest
from halluscope.core.spec import ModelSpec

OLD = Path(__file__).parent / "data" / "store_before_renames" / "run" / "halluscope.sqlite"
SEPARATORS = "~|:[]@%/?=&, "
text = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(SEPARATORS), max_size=40)
nonempty = text.filter(bool)
kinds = st.text(alphabet=st.characters(codec="utf-8", exclude_characters=STAGE_MARKS), min_size=1, max_size=20)
languages = st.none() | st.from_regex(r"[a-z]{2,3}", fullmatch=True)


@given(kinds, languages, st.none() | text)
def test_stage_name_round_trip(kind, language, subject):
    name = StageName(kind, language, subject)
    assert StageName.decode(name.encode()) == name


@given(nonempty, nonempty, st.none() | st.integers(-(2**40), 2**40))
def test_answer_key_round_trip(question, model, seed):
    key = AnswerKey(question, model, seed)
    assert AnswerKey.decode(key.encode()) == key


@given(nonempty, text.filter(lambda t: t and "|" not in t), st.none() | text.filter(lambda t: t and "|" not in t))
def test_detect_run_key_round_trip(detector, task, input_):
    key = DetectRunKey(detector, task, input_)
    assert DetectRunKey.decode(key.encode()) == key


@given(nonempty.filter(lambda t: ":" not in t), text)
def test_yes_no_item_key_round_trip(sampling, entry):
    key = YesNoItemKey(sampling, entry)
    assert YesNoItemKey.decode(key.encode()) == key


@given(text, st.none() | nonempty.filter(lambda t: "/" not in t))
@example(entry="", sampling="%")  # a strategy starting like an escaped entry id
def test_closed_form_item_key_round_trip(entry, sampling):
    key = ClosedFormItemKey(entry, sampling)
    assert ClosedFormItemKey.decode(key.encode()) == key


@given(nonempty.filter(lambda t: ":" not in t), text)
def test_audio_key_round_trip(kind, item):
    key = AudioKey(kind, item)
    assert AudioKey.decode(key.encode()) == key


plain = text.filter(lambda t: not t.startswith("%"))


@given(plain, nonempty.filter(lambda t: "/" not in t))
def test_closed_form_item_ids_are_the_ones_stored_before(entry, sampling):
    # the formula closedform/run.py wrote item ids with before the key type
    assert ClosedFormItemKey(entry, sampling).encode() == f"{sampling}/{entry}"
    if "/" not in entry:
        assert ClosedFormItemKey(entry).encode() == entry


@given(plain, plain.filter(lambda t: "~" not in t), st.none() | st.integers(0, 10**6))
def test_answer_ids_are_the_ones_stored_before(question, model, seed):
    # the formula mishap/answers.py wrote ids with before the key type (every model spec without '~')
    assert AnswerKey(question, model, seed).encode() == f"{question}~{model}~{'greedy' if seed is None else f's{seed}'}"


@given(text, plain.filter(lambda t: "|" not in t))
def test_stage_names_and_run_keys_are_the_ones_stored_before(subject, detector):
    assert StageName("asr", subject=subject).encode() == f"asr[{subject}]"
    assert StageName("judge", subject=subject).encode() == f"judge:{subject}"
    assert StageName("answers", subject=subject).encode() == f"answers:{subject}"
    assert DetectRunKey(detector, "binary", "text").encode() == f"{detector}|binary|text"
    assert DetectRunKey(detector, "strict").encode() == f"{detector}|strict"


def test_a_model_spec_round_trips_through_an_answer_key():
    spec = ModelSpec.parse("hf-audio/~/models/qwen2-audio", {"mitigation": "aad", "alpha": 0.5, "name": "a~b"})
    from halluscope.mishap.answers import answer_id

    key = AnswerKey.decode(answer_id("clip-1~open~0", spec, None))  # the id 'mishap answer' stores
    assert key.spec == spec and key.question == "clip-1~open~0" and key.seed is None
    assert answer_id("c~open~0", "hf/x", 3) == "c~open~0~hf/x~s3"  # a spec without '~': the stored form


def test_bad_keys_are_refused_with_what_was_expected():
    with pytest.raises(HalluscopeError, match="expected 'greedy' or 's<seed>'"):
        AnswerKey.decode("q~m~sampled")
    with pytest.raises(HalluscopeError, match="<question id>~<model>~greedy"):
        AnswerKey.decode("q-greedy")
    with pytest.raises(HalluscopeError, match=r"asr\[<subject>\]"):
        StageName.decode("asr:x")
    with pytest.raises(HalluscopeError, match="language code"):
        StageName.decode("tts@EN")
    with pytest.raises(HalluscopeError, match="without"):
        StageName("a[b")
    with pytest.raises(HalluscopeError, match=r"<detector>\|<task>"):
        DetectRunKey.decode("only-a-detector")
    assert StageName.parse("tts@EN") is None


def test_the_keys_of_a_stored_run_decode():
    """store_before_renames (written by the code of an earlier release): every stage name its results and manifests
    hold decodes and encodes back to the same bytes; its detect run's page key does too."""
    with sqlite3.connect(OLD) as db:
        names = {r[0] for r in db.execute("SELECT DISTINCT stage FROM results")}
        manifests = [RunManifest.model_validate_json(r[0]) for r in db.execute("SELECT payload FROM manifests")]
    names |= {k for m in manifests for k in m.stages}
    assert {"tts", "asr", "detect", "generate"} <= names
    for name in names:
        assert StageName.decode(name).encode() == name
    detect = next(m for m in manifests if m.command == "detect").config
    key = DetectRunKey(detect["detector"], detect["task"], detect["input"])
    assert DetectRunKey.decode(key.encode()) == key and key.encode().startswith(detect["detector"] + "|")


# -- the rule: these formats are encoded and decoded in core/keys.py (and model specs in core/spec.py) only ----------

SRC = Path(__file__).parents[2] / "src" / "halluscope"
# separator -> the modules (under src/halluscope) that may split a string on it, each for a format of its own
SPLIT_ALLOWED = {
    "~": {"core/keys.py"},  # answer keys
    "|": {"core/keys.py", "reply/keyed.py"},  # detect run keys; a markdown table's cells in a reply
    "?": {"core/spec.py"},  # a model spec's options
    "/": {"core/keys.py", "core/spec.py", "prompts/__init__.py"},  # specs, closed-form items; a template's path
    ":": {  # stage names, yes/no items, audio keys; other formats of their own:
        "core/keys.py",
        "cli/main.py",  # a command's 'module:function'
        "core/registry.py",  # an entry point's 'module:attr'
        "report/sections.py",  # a section's 'module:function'
        "core/executors/options.py",  # '--stage-executor stage:executor'
        "core/hosts.py",  # 'host:port'
        "core/textfile.py",  # a header line 'key: value'
        "backends/speech/tts.py",  # a voice list line of an engine's own CLI
    },
}
SPLITTERS = {"split", "rsplit", "partition", "rpartition"}
# a string literal or an f-string's literal part that starts building or reading one of the formats
KEY_LITERAL = re.compile(r"^(answers|judge|asr|tts)(:(?! )|@|\[)|~greedy")
KEY_LITERAL_ALLOWED = {"spoken/judge/run.py"}  # 'judge:<variant id>': a call's tag (its cache key), not a stage
SLICE = re.compile(r"\[\s*[2-9]\s*:\s*-1\s*\]")  # 'asr[spec]'[4:-1] and the like (a quote strip is [1:-1])
KEY_MODULES = {"core/keys.py", "core/spec.py"}


def _source_files() -> list[tuple[str, str]]:
    return [(str(p.relative_to(SRC)), p.read_text(encoding="utf-8")) for p in sorted(SRC.rglob("*.py"))]


def _hand_decoded(module: str, source: str) -> list[str]:
    found = []
    tree = ast.parse(source)
    in_fstring = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SPLITTERS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in SPLIT_ALLOWED
            and module not in SPLIT_ALLOWED[node.args[0].value]
        ):
            found.append(f"{module}:{node.lineno}: .{node.func.attr}({node.args[0].value!r})")
        if module in KEY_MODULES | KEY_LITERAL_ALLOWED or id(node) in in_fstring:
            continue
        parts = node.values if isinstance(node, ast.JoinedStr) else [node] if isinstance(node, ast.Constant) else []
        for part in parts:
            if isinstance(part, ast.Constant) and isinstance(part.value, str) and KEY_LITERAL.search(part.value):
                if isinstance(node, ast.JoinedStr) or _is_key_argument(node, source):
                    found.append(f"{module}:{node.lineno}: key literal {part.value[:30]!r}")
    if module not in KEY_MODULES:
        found += [
            f"{module}:{source.count(chr(10), 0, m.start()) + 1}: slice {m.group()}" for m in SLICE.finditer(source)
        ]
    return found


def _is_key_argument(node: ast.AST, source: str) -> bool:
    """A plain literal counts where it is matched against a key: ``k.startswith("answers:")``, ``"asr[" in k``."""
    line = source.splitlines()[node.lineno - 1]  # type: ignore[attr-defined]
    return bool(re.search(r"startswith\(|endswith\(|\bin\b", line))


def test_no_module_hand_decodes_the_typed_keys():
    """Stage names, answer keys, detect run keys, closed-form item keys, audio keys: one encoder and one decoder
    each, in core/keys.py; model specs: ModelSpec (core/spec.py). A module that splits a string on one of their
    separators, builds one with an f-string, matches a key's prefix or slices one open is listed here. Fix: use the
    key type (StageName, AnswerKey, ..., ModelSpec.parse / ModelSpec.written); a separator of another format of
    the module's own: add the module to SPLIT_ALLOWED with what it splits."""
    found = [hit for module, source in _source_files() for hit in _hand_decoded(module, source)]
    assert not found, "hand-decoded or hand-encoded keys:\n" + "\n".join(found)


def test_the_rule_finds_what_it_forbids():
    samples = {
        'a, _, b = key.partition("~")': "partition('~')",
        'provider = spec.split("/")[0]': "split('/')",
        'name = f"answers:{model}"': "key literal",
        'ok = k.startswith("answers:")': "key literal",
        "spec = name[4:-1]": "slice",
        'kind, _, rest = key.partition(":")': "partition(':')",
    }
    for code, what in samples.items():
        hits = _hand_decoded("spoken/x.py", code)
        assert hits and what in hits[0], (code, hits)
    assert not _hand_decoded("core/keys.py", 'a = k.partition("~")')
    assert not _hand_decoded("spoken/x.py", 'label = "answers of the model"')
