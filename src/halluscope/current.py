"""The records each table may read: ``select(store)`` -> {table: Selection(current, stale)}, the one place that decides
it (the rule and the digests: core/provenance.py). Every report table, the viewer, the paired tests and the MISHAP
readers (``detect_runs``, ``load_judgements``, ``human_labels``) read through it; ``stale_rows`` lists what is left
out, with the command that refreshes it (the report's first section, 'mishap report', the viewer).

Tables: ``detect`` and ``detect realworld`` (config identity -> the latest run consistent with the current build),
``answers`` (model -> answers stage key of the population in the tables), ``verdicts`` (answer id -> the latest
'mishap judge' verdict on the current text) and ``labels`` ((response id, annotator) -> the latest label on the
current text). A pure function of the store, memoised per open store while nothing is written (Store.version).

Records stored before digests were kept are upgraded where their stage keys say what they read: a detect run by the
build stages its manifest recorded (those it read by its input kind), a real-world run by the 'build realworld'
stages it recorded, a verdict by the answers stage key its judge run recorded for the model, a label by time (made
after the response text it labels was stored). Otherwise they are stale ``unknown``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from halluscope.core.keys import StageName
from halluscope.core.provenance import (
    ANSWER_STAGE,
    ANSWERS,
    IMPORTED,
    JUDGE,
    VALIDITY_STAGE,
    Selection,
    Stale,
    StaleKind,
    answer_populations,
    detect_command,
    detect_inputs,
    differs,
    judge_command,
    run_arg,
    text_digest,
)
from halluscope.core.records import MishapAnswer, ValidityItem
from halluscope.core.store import Store

# table name -> its selector; ``select`` runs them (each reads the store only)
_TABLES: dict[str, Callable[[Store], Selection]] = {}


def _table(name: str) -> Callable[[Callable[[Store], Selection]], Callable[[Store], Selection]]:
    def add(fn: Callable[[Store], Selection]) -> Callable[[Store], Selection]:
        _TABLES[name] = fn
        return fn

    return add


def tables() -> tuple[str, ...]:
    """The names ``select`` answers for."""
    return tuple(_TABLES)


def select(store: Store, *names: str) -> dict[str, Selection]:
    """Per table (all of ``tables()`` when none are named): the consistent records and the stale ones.

    A pure function of the store's content, read once per open store while nothing is written (Store.version)."""
    version = store.version()
    memo = store.memo.setdefault("provenance", {})
    out: dict[str, Selection] = {}
    for name in names or tuple(_TABLES):
        hit = memo.get(name)
        if hit is None or hit[0] != version:
            hit = memo[name] = (version, _TABLES[name](store))
        out[name] = hit[1]
    return out


def stale_rows(store: Store, *names: str) -> list[dict]:
    """Every record left out of a table, as report rows (table, record, kind, why, command)."""
    return [s.row() for sel in select(store, *names).values() for s in sel.stale]


# -- detect runs (Lost in Speech, 3.4): what each run read of the build --------------------------------------------


def read_parts(stages: Mapping[str, str], transcripts: str | None) -> dict[str, dict[str, str]]:
    """The stored stage parts (stage name -> fingerprint) a detect run reads of a build with these ``stages``, by
    ``detect_inputs``' argument: ``texts`` (its samples), ``transcripts`` (those of ``transcripts``, a compared ASR
    system's spec; None: the build's own) and ``audio`` (its clips)."""
    asr = StageName("asr", subject=transcripts or None)  # a compared system's: 'asr[spec]'
    return {
        "texts": {k: stages[k] for k in ("ingest", "generate") if k in stages},
        "transcripts": asr.parts(stages),
        "audio": StageName("tts").parts(stages),
    }


def _current_detect_inputs(store: Store, cfg: Any, memo: dict) -> dict[str, str] | None:
    """The digests the run's config would read from the current build (None: no build): from its stored results,
    unparsed (the build itself is not read)."""
    m = memo.get("build") or memo.setdefault("build", store.latest_manifest("build spoken"))
    if m is None:
        return None
    return detect_inputs(store, **read_parts(m.stages, getattr(cfg, "transcripts", None)), input=cfg.input, memo=memo)


def _upgraded(run: Any, build_stages: Mapping[str, str]) -> tuple[StaleKind, str] | None | bool:
    """A run stored without digests: consistent (None) when the build stage keys it recorded for what it read are
    the current build's; False when it recorded none to compare."""
    recorded = run.manifest.stages
    asr = getattr(run.config, "transcripts", None)
    names = ["ingest", "generate", str(StageName("asr", subject=asr or None))]
    if run.config.input == "audio":
        names.append("tts")
    if not all(n in recorded for n in names):
        return False
    changed = [n for n in names if build_stages.get(n) != recorded[n]]
    if not changed:
        return None
    return "changed", "stored before input digests were kept; the build stages it read changed: " + ", ".join(changed)


def _detect_selection(store: Store, command: str) -> Selection:
    """Per distinct config (core/runs.py ``RunConfig.identity``), the latest run consistent with the current build;
    a config none of whose runs is consistent is stale, with the command that reruns it."""
    from halluscope.core.runs import runs

    build = store.latest_manifest("build spoken")  # its stage keys: the build's records are read unparsed
    memo: dict = {}
    current: dict[str, Any] = {}
    latest: dict[str, tuple[Any, tuple[StaleKind, str]]] = {}
    for run in runs(store, command):
        cfg = run.config
        verdict = _detect_verdict(store, run, build, command, memo)
        if verdict is None:
            current[cfg.identity()] = run
            latest.pop(cfg.identity(), None)
        else:
            latest[cfg.identity()] = (run, verdict)
    stale = []
    for ident, (run, verdict) in latest.items():
        if ident in current:
            continue  # an older run of this config read the current build: it is the one shown
        cfg = run.config
        what = f"{command} {cfg.detector} task={cfg.task} input={cfg.input}" + (
            f" transcripts={cfg.transcripts}" if getattr(cfg, "transcripts", None) else ""
        )
        stale.append(Stale(command, what, verdict[0], verdict[1], detect_command(store, cfg, command)))
    return Selection(current, tuple(stale))


def _detect_verdict(store: Store, run: Any, build: Any, command: str, memo: dict) -> tuple[StaleKind, str] | None:
    """None when ``run`` read what the current build (its manifest) holds; else (kind, why)."""
    if build is None:
        return "changed", "the run holds no 'build spoken' any more"
    if run.manifest.inputs and command == "detect":
        return differs(run.manifest.inputs, _current_detect_inputs(store, run.config, memo) or {})
    up = _upgraded(run, build.stages)
    if command == "detect realworld" and up in (None, False):
        # the real-world split is built over the build; runs before digests recorded its stages only
        return _realworld_current(store, run)
    if up is False:
        return differs(None, {})
    return up  # type: ignore[return-value]


def _realworld_current(store: Store, run: Any) -> tuple[StaleKind, str] | None:
    """A real-world run also read the real-world split: its recorded stages must be the latest 'build realworld''s."""
    m = store.latest_manifest("build realworld")
    if m is None:
        return "changed", "the run holds no 'build realworld' any more"
    changed = [k for k, fp in m.stages.items() if k in run.manifest.stages and run.manifest.stages[k] != fp]
    missing: list[str] = [
        k for k in ("realworld_match", "realworld_asr") if k in m.stages and k not in run.manifest.stages
    ]
    if changed or missing:
        return "changed", "the real-world split it read changed: " + ", ".join(changed + missing)
    return None


@_table("detect")
def _detect(store: Store) -> Selection:
    """Detect runs (Tables 2, 3, 5, 6, 7 of Lost in Speech, the paired tests, the analyses, the viewer)."""
    return _detect_selection(store, "detect")


@_table("detect realworld")
def _detect_realworld(store: Store) -> Selection:
    return _detect_selection(store, "detect realworld")


@_table("answers")
def _answers(store: Store) -> Selection:
    """The MISHAP answer population of each model (Tables 1, 2, 8, 11, 12; agreement; the annotation app)."""
    return answer_populations(store)


# -- verdicts and labels: on the response text they read -----------------------------------------------------------


def answers_now(store: Store) -> dict[str, MishapAnswer]:
    """The MISHAP answers of the tables' populations (``answer_populations``), by answer id ({} before any
    questions: a validity-only run)."""
    out: dict[str, MishapAnswer] = {}
    for fp in answer_populations(store).current.values():
        out.update(store.results(ANSWER_STAGE, fp, MishapAnswer))
    return out


def imported_responses(store: Store) -> dict[str, ValidityItem]:
    """Every imported validity response, by id (a later import of the same benchmark and model replaces the
    earlier one: the latest run per identity, core/runs.py ``ValidityImportConfig``)."""
    from halluscope.core.runs import latest_runs

    out: dict[str, ValidityItem] = {}
    for r in latest_runs(store, IMPORTED):
        out.update(store.results(VALIDITY_STAGE, r.stages["validity"], ValidityItem))
    return out


@_table("verdicts")
def _verdicts(store: Store) -> Selection:
    """The report's judge ('mishap judge', latest run) on the current answer texts; a judgeable answer without a
    consistent verdict is ``missing`` (not judged) or ``changed`` (judged on another text). Left-out verdicts are
    listed per model and kind, with how many."""
    from halluscope.core.records import GroundednessJudgement
    from halluscope.core.runs import config_of

    answers = answers_now(store)
    m = store.latest_manifest(JUDGE)
    judge = getattr(config_of(m), "judge", None) if m else None  # MishapJudgeConfig
    verdicts = store.results("mishap.judge", m.stages["judge"], GroundednessJudgement) if m else {}
    sets = answer_populations(store).current
    current: dict[str, GroundednessJudgement] = {}
    left: dict[tuple[str, StaleKind], list[str]] = {}  # (model, kind) -> why, per verdict left out
    for aid, a in sorted(answers.items()):
        j = verdicts.get(aid)
        if j is None:
            if a.judgeable:
                left.setdefault((a.model, "missing"), []).append("not judged" + (f" by {judge}" if judge else ""))
            continue
        if j.answer_sha256 is not None:
            why = differs({"answer": j.answer_sha256}, {"answer": text_digest(a.text)})
        elif m is not None and m.stages.get(str(StageName("answers", subject=a.model))) == sets.get(a.model):
            why = None  # upgraded: the judge run read this model's current answers stage
        else:
            why = differs(None, {})
        if why is None:
            current[aid] = j
        else:
            left.setdefault((a.model, why[0]), []).append(why[1])
    text = {
        "missing": "answer(s) not judged" + (f" by {judge}" if judge else " (no judge run yet)"),
        "changed": f"verdict(s) of {judge} on answer texts since re-made",
        "unknown": f"verdict(s) of {judge} stored before verdicts kept the digest of the text they read",
    }
    stale = [
        Stale("verdicts", f"{model}: {len(whys)}", kind, text[kind], judge_command(store, judge))
        for (model, kind), whys in sorted(left.items())
    ]
    return Selection(current, tuple(stale))


def response_digests(store: Store) -> tuple[dict[str, str], dict[str, float]]:
    """Every current response (MISHAP answers and imported validity responses): id -> text digest, and id -> when
    that text was stored (a label made later was made on it)."""
    from halluscope.core.runs import latest_runs

    digests = {k: text_digest(a.text) for k, a in answers_now(store).items()}
    written: dict[str, float] = {}
    for fp in answer_populations(store).current.values():
        written.update(store.updated(ANSWER_STAGE, fp))
    for k, v in imported_responses(store).items():
        digests[k] = text_digest(v.response)
    for r in latest_runs(store, IMPORTED):
        written.update(store.updated(VALIDITY_STAGE, r.stages["validity"]))
    return digests, written


@_table("labels")
def _labels(store: Store) -> Selection:
    """(response id, annotator) -> the latest human label, on the response text now shown; labels left out are
    listed per annotator and kind, with how many."""
    digests, written = response_digests(store)
    current: dict[tuple[str, str], Any] = {}
    left: dict[tuple[str, StaleKind], int] = {}
    for key, a in sorted(store.latest_labels().items()):
        if key[0] not in digests:
            continue  # a response no population holds now: not this run's table
        if a.answer_sha256 is not None:
            why = differs({"response": a.answer_sha256}, {"response": digests[key[0]]})
        elif key[0] in written and a.created >= written[key[0]]:
            why = None  # upgraded: labelled after the current text was stored
        else:
            why = differs(None, {})
        if why is None:
            current[key] = a  # type: ignore[index]
        else:
            left[(key[1], why[0])] = left.get((key[1], why[0]), 0) + 1
    text = {
        "changed": "label(s) on response texts since re-made; label the current texts again",
        "unknown": "label(s) made before the current texts were stored, before labels kept a digest",
    }
    command = f"halluscope mishap annotate {run_arg(store)}"
    stale = [Stale("labels", f"{who}: {n}", kind, text[kind], command) for (who, kind), n in sorted(left.items())]
    return Selection(current, tuple(stale))  # type: ignore[arg-type]


# -- populations of MISHAP responses (seed 001, 4.1-4.2) ------------------------------------------------------------


def provenance(store: Store) -> dict[str, str]:
    """response id -> what produced it: 'mishap answer <model>' or 'mishap validity import <benchmark>/<model>'."""
    out = {v.id: f"{IMPORTED} {v.benchmark}/{v.model}" for v in imported_responses(store).values()}
    out.update({a.id: f"{ANSWERS} {a.model}" for a in answers_now(store).values()})
    return out


def population(store: Store, source: str) -> set[str]:
    """The ids of the responses ``source`` (ANSWERS or IMPORTED) produced."""
    return {k for k, p in provenance(store).items() if p.startswith(source + " ")}
