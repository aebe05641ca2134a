"""The report's invariant as a property (issue: every figure is computed from the current inputs, or it is not
shown): hypothesis applies sequences of the user's commands to one tiny run that holds a spoken build and a MISHAP
run, and after EACH command checks that

(a) every table ``build_sections(store)`` shows equals the same table of a fresh run made from the final inputs
    only (the final configuration's commands replayed into a new run directory; fresh runs are cached per final
    configuration), and
(b) nothing stale is shown: a detect config ``select`` lists as stale has no row in a detection table, a model whose
    verdicts are all left out has no row in a hallucination-rate table, and the label count is that of the labels
    ``select`` keeps.

The commands, run through the CLI as users run them (or ``Annotations.add``, as the annotation app saves a label):
rebuild one language's speech with its other engine ('build spoken'; ('rebuild', 'ru') switches Russian between
'clear' and 'muffled'), detect (tfidf, on the texts or on the transcripts), 'mishap answer' (two models, with or
without --max-tokens 2, with or without --replace), 'mishap judge', a human label on every response the annotation
app offers, and 'mishap validity import'. 'mitigation sweep' (it needs a local hf-audio model: the tiny
random-weight one, tests/support/tiny_audio_lm) is in one explicit sequence of its own, a slow test: two models
answered and judged, a sweep of one of them, the other re-answered with --replace and judged again; the fresh run
replays the sweep too (its card must equal the fresh run's) and the sweep must leave the MISHAP tables as they were.

The stand-ins make every option visible in the texts: the test TTS writes the text's bytes into the samples, a
'muffled' voice drops every third word, and the test ASR reads the bytes back, so another engine for one language
changes that language's transcripts (and WER); the scripted audio model cuts its reply to --max-tokens words, so a
re-answer with other options changes every answer text.

Normalised before comparing (what legitimately differs between the run and its fresh replay): the run directory in
any string (it is in the commands), the clock's readings (the ASR's real-time factor 'rtf', a sweep arm's
'ms_per_token' and 'cost_ratio'), the stale listing itself (table 'stale', and the 'stale' count of
'mishap_counts': it lists history the fresh run does not have; (b) checks what it lists is not shown). The fresh run
replays in the order that gives the same consistent records: models whose verdicts are current are answered, then
judged, then the others answered; labels are added on the responses whose labels are current; a sweep last."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings, strategies as st
from typer.testing import CliRunner

from halluscope.backends.speech import ASR_BACKENDS, TTS_BACKENDS
from halluscope.cli.main import app
from halluscope.core.keys import AnswerKey
from halluscope.core.store import Store
from halluscope.current import select
from halluscope.mishap.labels import Annotations, annotation_items
from halluscope.report.sections import build_sections
from support import fakes, scripted
from support.chat_server import ChatServer, Reply
from support.corpus_fixtures import write_jsonl
from support.tiny_audio_lm import qwen2_audio_dir  # noqa: F401 - fixture (module-scoped: one tiny model for all steps)

LANGS = ("en", "ru")
ENGINES = ("clear", "muffled")
MODELS = ("openai/alm", "openai/alm2")
TOKENS = (None, 2)  # --max-tokens: none, or 2 words (shorter than every scripted reply)
INPUTS = ("text", "transcript")
JUDGE = "openai/judge"
CLOCK = ("rtf", "ms_per_token", "cost_ratio")  # measured by the clock: differ between a run and its replay
RATE_TABLES = ("mishap_table1", "mishap_table2", "mishap_table8", "mishap_table11", "mishap_table12")
HALLU = [  # HalluAudio-style responses for the validity study
    {
        "audio": f"s{i}.wav",
        "prompt": "Is there a dog barking?",
        "reference": "yes",
        "subset": "fsd_binary",
        "domain": "sound",
        "pred": "Yes, a dog is barking." if i % 2 else "There are four cats.",
    }
    for i in range(4)
]


# -- the stand-ins: a voice that writes the text into the samples, an ear that reads it back -----------------------


class Voice:
    """Each UTF-8 byte of the text is one sample ((b + 1) / 256), padded with silence to 0.1 s; 'muffled' loses
    every third word."""

    def __init__(self, engine: str) -> None:
        self.engine = engine
        self.spec = f"test-voice/{engine}"

    def voices(self, language: str) -> list[str]:
        return ["none"]

    def synthesize(self, text: str, *, language: str, voice: str) -> np.ndarray:
        words = text.split()
        if self.engine == "muffled":
            words = [w for i, w in enumerate(words) if i % 3 != 2]
        data = np.frombuffer(" ".join(words).encode("utf-8"), dtype=np.uint8).astype(np.float32)
        out = np.zeros(max(1600, len(data)), dtype=np.float32)
        out[: len(data)] = (data + 1) / 256
        return out


class Ear:
    spec = "test-ear"

    def transcribe(self, samples: np.ndarray, *, language: str) -> str:
        codes = np.rint(np.asarray(samples, dtype=np.float64) * 256) - 1
        return bytes(int(c) for c in codes if c >= 0).decode("utf-8", errors="replace")


def _register() -> None:
    if "test-voice" not in TTS_BACKENDS.providers:
        TTS_BACKENDS.register("test-voice")(lambda model, **o: Voice(model))
    if "test-ear" not in ASR_BACKENDS.providers:
        ASR_BACKENDS.register("test-ear")(lambda model, **o: Ear())


def _script(state: dict):
    base = scripted.make_script(state)

    def script(req: dict, n: int) -> Reply:
        reply = base(req, n)
        if req["model"].startswith("alm") and (req.get("max_tokens") or 512) < 16:  # the audio model, cut short
            return Reply(content=" ".join((reply.content or "").split()[: req["max_tokens"]]))
        return reply

    return script


# -- the commands --------------------------------------------------------------------------------------------------


def _ok(*args: object) -> str:
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, f"{' '.join(map(str, args))}\n{res.output}"
    return res.output


class Env:
    """The module's material: a MISHAP run with clips, questions and rubrics (no spoken build, no answers) to copy,
    the corpus, the validity file, and the fresh runs' tables per final configuration."""

    def __init__(self, root: Path, base: Path, corpus: Path, validity: Path) -> None:
        self.root, self.base, self.corpus, self.validity = root, base, corpus, validity
        self.fresh: dict[tuple, dict] = {}
        self.runs = 0

    def __repr__(self) -> str:  # what hypothesis prints of it beside a failing example
        return f"Env({self.root})"

    def new_run(self, name: str) -> Path:
        self.runs += 1
        run = self.root / f"{name}-{self.runs}"
        shutil.copytree(self.base, run)
        return run


def build(env: Env, run: Path, tts: dict[str, str]) -> None:
    voices = ",".join(f"{lang}=test-voice/{tts[lang]}" for lang in LANGS)
    _ok("build", "spoken", run, "--corpus", env.corpus, "--tts", voices, "--asr", "test-ear", "--langs", ",".join(LANGS),
        "--rewrites-per-article", "1", "--seed", "5")  # fmt: skip


def detect(run: Path, input_: str) -> None:
    _ok("detect", run, "--detector", "tfidf", "--task", "binary", "--input", input_)


def answer(run: Path, model: str, tokens: int | None, replace: bool) -> None:
    extra = ["--max-tokens", tokens] if tokens else []
    _ok("mishap", "answer", run, "--model", model, *extra, *(["--replace"] if replace else []))


def judge(run: Path) -> None:
    _ok("mishap", "judge", run, "--judge", JUDGE)


def import_validity(env: Env, run: Path) -> None:
    _ok("mishap", "validity", "import", run, env.validity, "--benchmark", "halluaudio", "--model", "alm-1")


def label(run: Path, keep=lambda item: True) -> int:
    """ann1 labels every response the annotation app offers (as the app saves one: the text it showed)."""
    items = [it for it in annotation_items(run)[0] if keep(it)]
    ann = Annotations(run)
    try:
        for it in items:
            verdict = "grounded" if "cannot" in (it["response"] or "") else "hallucinated"
            ann.add(answer_id=it["id"], annotator="ann1", label=verdict, response=it["response"])
    finally:
        ann.close()
    return len(items)


# -- the model: what the final inputs are, after any sequence ------------------------------------------------------


@dataclass
class World:
    tts: dict = field(default_factory=lambda: dict.fromkeys(LANGS, "clear"))
    detected: dict = field(default_factory=dict)  # input -> the speech configurations it was run on
    answers: dict = field(default_factory=dict)  # model -> --max-tokens of its population in the tables
    judged: dict = field(default_factory=dict)  # model -> --max-tokens of the texts the judge's verdicts read
    labelled: dict = field(default_factory=dict)  # model -> --max-tokens of the texts ann1's labels read
    imported: bool = False
    labelled_imports: bool = False
    swept: tuple = ()  # the 'mitigation sweep' arguments of the sweep recorded, if any (it keeps its own population)

    def speech(self) -> tuple:
        return tuple(sorted(self.tts.items()))

    def final(self) -> tuple:
        """The final configuration: the inputs, and which derived records are consistent with them."""
        detects = tuple(
            i for i in INPUTS if self.detected.get(i) and (i == "text" or self.speech() in self.detected[i])
        )  # the texts never change with the speech; the transcripts are the speech configuration's
        return (
            self.speech(),
            detects,
            tuple(sorted(self.answers.items(), key=str)),
            tuple(m for m in sorted(self.answers) if m in self.judged and self.judged[m] == self.answers[m]),
            tuple(m for m in sorted(self.answers) if m in self.labelled and self.labelled[m] == self.answers[m]),
            self.imported,
            self.labelled_imports,
            self.swept,
        )


def apply(env: Env, run: Path, world: World, op: tuple) -> None:
    kind = op[0]
    if kind == "rebuild":  # the language's other engine: its speech, so its transcripts, change
        lang = op[1]
        world.tts[lang] = next(e for e in ENGINES if e != world.tts[lang])
        build(env, run, world.tts)
    elif kind == "detect":
        detect(run, op[1])
        world.detected.setdefault(op[1], set()).add(world.speech())
    elif kind == "answer":
        _, model, tokens, replace = op
        answer(run, model, tokens, replace)
        if model not in world.answers or replace:  # a re-answer with other options is kept apart
            world.answers[model] = tokens
    elif kind == "judge":
        if world.answers:  # nothing to judge yet: the command is not run
            judge(run)
            world.judged.update(world.answers)
    elif kind == "label":
        if world.answers or world.imported:
            label(run)
            world.labelled.update(world.answers)
            world.labelled_imports = world.imported
    elif kind == "sweep":  # ('sweep', args after the run directory)
        _ok("mitigation", "sweep", run, *op[1])
        world.swept = tuple(op[1])
    elif kind == "validity import":
        import_validity(env, run)
        world.imported = True
    else:
        raise AssertionError(op)


def fresh_tables(env: Env, final: tuple) -> dict:
    """The tables of a new run made by the final configuration's commands only (cached per configuration)."""
    if final in env.fresh:
        return env.fresh[final]
    speech, detects, answers, judged, labelled, imported, labelled_imports, swept = final
    run = env.new_run("fresh")
    build(env, run, dict(speech))
    for i in detects:
        detect(run, i)
    tokens = dict(answers)
    for m in judged:
        answer(run, m, tokens[m], False)
    if judged:
        judge(run)
    for m in sorted(set(tokens) - set(judged)):
        answer(run, m, tokens[m], False)
    if imported:
        import_validity(env, run)
    if labelled or labelled_imports:
        label(run, lambda it: it["model"] in labelled or (labelled_imports and it["id"].startswith("validity~")))
    if swept:
        _ok("mitigation", "sweep", run, *swept)
    env.fresh[final] = _tables(run)[0]
    return env.fresh[final]


# -- the check -----------------------------------------------------------------------------------------------------


def _norm(value, run: Path):
    if isinstance(value, str):
        return value.replace(str(run), "<run>")
    if isinstance(value, dict):  # the clock's readings: the ASR's real-time factor, a sweep arm's decoding cost
        return {k: _norm(v, run) for k, v in value.items() if k not in CLOCK}
    if isinstance(value, (list, tuple)):
        return [_norm(v, run) for v in value]
    if isinstance(value, float) and value != value:
        return "nan"
    return value


def _tables(run: Path) -> tuple[dict, dict]:
    """(section title, table id) -> normalised rows of every table the report shows; and select(store)."""
    with Store(run, readonly=True) as store:
        sections = build_sections(store)
        chosen = select(store)
    out = {}
    for s in sections:
        for t in s.tables:
            if t.id == "stale":
                continue  # the listing of what is left out: history the fresh run does not have; (b) checks it
            rows = [_norm(r, run) for r in t.rows]
            if t.id == "mishap_counts":
                rows = [{k: v for k, v in r.items() if k != "stale"} for r in rows]
            out[(s.title, t.id)] = json.loads(json.dumps(rows, default=str))
    return out, chosen


def _diff(here: list, there: list) -> str:
    if len(here) != len(there):
        return f"{len(here)} rows here, {len(there)} in the fresh run"
    return "; ".join(
        f"row {i} {k}: {a.get(k)!r} here, {b.get(k)!r} fresh"
        for i, (a, b) in enumerate(zip(here, there))
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    )


def check(env: Env, run: Path, world: World, step: int, op: tuple) -> None:
    shown, chosen = _tables(run)
    # (b) nothing stale is shown
    rows = [r for (_, tid), rs in shown.items() for r in rs]
    for s in chosen["detect"].stale:
        input_ = s.record.split("input=", 1)[1].split()[0]
        shown_inputs = {r.get("input") for r in rows if r.get("detector") == "tfidf" and "input" in r}
        assert input_ not in shown_inputs, f"after {op}: stale detect run shown: {s}"
    stale_models = {s.record.split(": ")[0] for s in chosen["verdicts"].stale}
    judged_models = {AnswerKey.decode(aid).model for aid in chosen["verdicts"].current}
    for (_, tid), rs in shown.items():
        if tid in RATE_TABLES:
            shown_models = {r.get("model") for r in rs}
            assert not (stale_models - judged_models) & shown_models, f"after {op}: rates of stale verdicts shown"
    counts = [r for (_, tid), rs in shown.items() if tid == "mishap_counts" for r in rs]
    if counts:
        kept = {k for k in chosen["labels"].current if not k[0].startswith("validity~")}
        assert counts[0]["human_labels"] == len(kept), f"after {op}: the label count is not the current labels'"
    # (a) every shown table equals the fresh run's
    fresh = fresh_tables(env, world.final())
    assert set(shown) == set(fresh), (
        f"after step {step} {op}: tables only here {sorted(set(shown) - set(fresh))}, "
        f"only in the fresh run {sorted(set(fresh) - set(shown))}"
    )
    for key in shown:
        assert shown[key] == fresh[key], f"after step {step} {op}: table {key} differs from the fresh run's: " + _diff(
            shown[key], fresh[key]
        )


# -- the property --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from halluscope.backends.llm import LLMConfig
    from halluscope.mishap.clips import import_clips
    from halluscope.mishap.questions import make_questions
    from halluscope.mishap.rubrics import make_rubrics

    _register()
    root = tmp_path_factory.mktemp("figures")
    llm = root / "llm.json"
    llm.write_text(json.dumps({"openai": {"max_retries": 0, "backoff_base_s": 0}}))
    with pytest.MonkeyPatch.context() as mp, ChatServer(_script({})) as srv:
        mp.setenv("HALLUSCOPE_LLM_CONFIG", str(llm))
        mp.setenv("OPENAI_BASE_URL", srv.url)
        mp.setenv("OPENAI_API_KEY", "k")
        cfg = LLMConfig(openai={"max_retries": 0, "backoff_base_s": 0})
        base = root / "base"
        manifest = scripted.write_clips(root / "data", uninformative=False)
        import_clips(base, manifest, config=cfg, quiet=True)
        make_questions(base, "openai/writer", per_category=1, checker="none", config=cfg, quiet=True)
        make_rubrics(base, "openai/rubric", config=cfg, quiet=True)
        yield Env(
            root=root,
            base=base,
            corpus=fakes.write_corpus(root / "corpus.jsonl"),
            validity=write_jsonl(root / "halluaudio.jsonl", HALLU),
        )


OPS = st.one_of(
    st.tuples(st.just("rebuild"), st.sampled_from(LANGS)),
    st.tuples(st.just("detect"), st.sampled_from(INPUTS)),
    st.tuples(st.just("answer"), st.sampled_from(MODELS), st.sampled_from(TOKENS), st.booleans()),
    st.sampled_from([("judge",), ("label",), ("validity import",)]),
)


@settings(  # each step builds two reports: few examples, no shrinking (a failing sequence has 4 commands or fewer)
    max_examples=3,
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=st.lists(OPS, min_size=1, max_size=4))
# the cases: a Russian rebuild under a transcript run; a re-answer with other options, then --replace
@example(ops=[("detect", "transcript"), ("detect", "text"), ("rebuild", "ru"), ("detect", "transcript"),
              ("rebuild", "ru")])  # fmt: skip
@example(ops=[("answer", "openai/alm", None, False), ("judge",), ("label",), ("answer", "openai/alm", 2, False),
              ("answer", "openai/alm", 2, True), ("validity import",), ("answer", "openai/alm2", None, False),
              ("label",), ("judge",)])  # fmt: skip
def test_every_shown_table_is_the_fresh_runs_after_each_command(env, ops):
    run = env.new_run("run")
    world = World()
    build(env, run, world.tts)  # the scripted server and its address: the module's (the env fixture)
    check(env, run, world, 0, ("build",))
    for step, op in enumerate(ops, 1):
        apply(env, run, world, op)
        check(env, run, world, step, op)
    shutil.rmtree(run)


@pytest.mark.slow  # 41-46 s on the shared 2-core machine (7 steps, each with a fresh replay; 4 sweeps in all)
def test_a_sweep_between_answers_and_a_re_answer_keeps_every_table_the_fresh_runs(env, qwen2_audio_dir):  # noqa: F811
    """'mitigation sweep' in the invariant: two models answered and judged, a sweep of one of them (its own
    population: its card must equal the fresh run's, Tables 1/2/8/11/12 and the counts must not move), then the
    other re-answered with --replace and judged again; after each step every shown table is the fresh run's."""
    local = f"hf-audio/{qwen2_audio_dir}"
    sweep = ("--model", local, "--method", "aad", "--strength", "1", "--seeds", "0", "--judge", JUDGE,
             "--max-tokens", "2")  # fmt: skip
    ops = [("answer", "openai/alm", None, False), ("answer", local, 2, False), ("judge",), ("sweep", sweep),
           ("answer", "openai/alm", 2, True), ("judge",)]  # fmt: skip
    run = env.new_run("sweep")
    world = World()
    build(env, run, world.tts)
    check(env, run, world, 0, ("build",))
    for step, op in enumerate(ops, 1):
        before = _tables(run)[0]
        apply(env, run, world, op)
        check(env, run, world, step, op)
        if op[0] == "sweep":
            after = _tables(run)[0]
            cards = [k for k in after if k[1].startswith("mitigation_card")]
            assert cards and all(after[k] for k in cards), f"the sweep's card is not shown: {sorted(after)}"
            for key, rows in before.items():  # the sweep keeps its own population: the MISHAP tables do not move
                if key[1] in RATE_TABLES or key[1] == "mishap_counts":
                    assert after.get(key) == rows, f"the sweep changed table {key}: " + _diff(
                        after.get(key) or [], rows
                    )
            assert any(k[1] in RATE_TABLES and v for k, v in before.items()), "no rate table to compare"
    shutil.rmtree(run)
