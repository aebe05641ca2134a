"""Kuan et al.'s generative task (Interspeech 2024): object hallucination in free captions.

Input as released: ``generative_data_metadata.csv`` (``youtube_id, caption, label``; caption and label are Python
list literals: the AudioCaps captions and the clip's AudioSet labels) and the authors' generation output, a JSON
object ``{youtube_id: {prompt: {"prediction": ...}}}`` (five prompts per clip: "Describe the audio.", "What do you
hear?", ...).

Metrics (C.-Y. Kuan, W.-P. Huang, H.-y. Lee, "Understanding Sounds, Missing the Questions: The Challenge of Object
Hallucination in Large Audio-Language Models", Interspeech 2024, section 3; adapted from CHAIR, A. Rohrbach et al.,
"Object Hallucination in Image Captioning", EMNLP 2018), per prompt and overall, over the objects a caption names:

* ECHO_I (instance level) = hallucinated objects / all objects named, over all captions;
* ECHO_S (sentence level) = captions naming at least one hallucinated object / captions;
* Cover = objects of the clip's labels that the caption names / the clip's label objects.

These pooled figures are ``metrics``; ``metrics_compat`` averages per caption as the authors' evaluation.py does
(``per_caption``). Beside each figure stands its human floor: the clips' own reference captions (the metadata's
``caption`` lists) scored by the same extractor against the same labels.

Two extractors find the objects a caption names; the result and its notes say which produced the figures:

* ``vocabulary`` (the default, offline): one of the file's label names (the vocabulary of every clip's labels,
  matched word by word up to inflection, the longest spelling first, mentions in a negation's scope dropped) occurs
  in the caption; it is *hallucinated* when it is not one of the clip's labels (nor, with ``--ontology``, a class
  above or below one). Only objects a label names are found, so ECHO is a lower bound.
* ``llm:<spec>`` (as the paper does): an LLM lists the caption's sound sources (closedform.llmextract, calls stored
  and resumable); a phrase is grounded when it names one of the clip's labels or a label names it, else hallucinated.
"""

from __future__ import annotations

import ast
import csv
import functools
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from halluscope.closedform.ontology import Ontology
from halluscope.core.errors import InputError
from halluscope.reply.free import normalize_label
from halluscope.reply.lemmas import lemma, same_word
from halluscope.reply.negation import negated, scopes_after
from halluscope.reply.normal import find_refusal, normalize_reply

_QUALIFIER = re.compile(r"\s*\([^)]*\)")


def _list(value: str, *, file: Path, row: int, field: str) -> list[str]:
    try:
        out = ast.literal_eval(value) if value.strip().startswith("[") else [value]
    except (ValueError, SyntaxError) as exc:
        raise InputError(
            f"expected a list literal, got {value[:60]!r}",
            file=str(file),
            row=row,
            field=field,
            fix="keep the released form, e.g. ['Speech', 'Dog']",
        ) from exc
    return [str(x) for x in out]


def load_metadata(path: str | Path) -> dict[str, dict]:
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"youtube_id", "caption", "label"} - set(reader.fieldnames or [])
        if missing:
            raise InputError(
                f"missing column(s) {sorted(missing)}",
                file=str(path),
                row=1,
                fix="pass generative_data_metadata.csv as released (youtube_id, caption, label)",
            )
        return {
            r["youtube_id"]: {
                "captions": _list(r["caption"], file=path, row=k, field="caption"),
                "labels": _list(r["label"], file=path, row=k, field="label"),
            }
            for k, r in enumerate(reader, start=2)
        }


# AudioSet's acoustic environments ("Inside, small room", "Outside, rural or natural") name a place in their
# parts, not a sound: they are matched whole; "etc." is no name ("Bee, wasp, etc.")
_PLACE = re.compile(r"^\s*(?:inside|outside)\s*,", re.IGNORECASE)
_NO_NAME = {"etc", "etc."}


def _names(vocabulary: tuple[str, ...]) -> dict[str, str]:
    """Every spelling that names a label: the label, the label without its parenthesised qualifier ("frying" names
    "Frying (food)"), and each comma-separated name of an AudioSet display name ("car horn" names "Vehicle horn, car
    horn, honking"); a spelling that is a label of its own keeps naming that label."""
    names = {lab: lab for lab in vocabulary}
    for lab in vocabulary:
        parts = [] if "," not in lab or _PLACE.match(lab) else [p.strip() for p in lab.split(",")]
        for short in (_QUALIFIER.sub(" ", lab).strip(), *parts):
            if short and short != lab and short.lower() not in _NO_NAME:
                names.setdefault(short, lab)
    return names


_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


@functools.lru_cache(maxsize=64)
def _name_index(vocabulary: tuple[str, ...]) -> tuple[dict[str, str], dict[str, list[tuple[str, ...]]]]:
    """The spellings of the labels (``_names``) and their word tuples by the lemma and by the first three letters of
    their first word, built once per vocabulary."""
    names: dict[tuple[str, ...], str] = {}
    for name, lab in _names(vocabulary).items():
        words = tuple(_WORD.findall(normalize_label(name)))
        if words:
            names.setdefault(words, lab)
    index: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for words in names:
        for key in {lemma(words[0]), words[0][:3]}:
            index[key].append(words)
    return {" ".join(w): lab for w, lab in names.items()}, index


def _mentions(norm: str, vocabulary: tuple[str, ...]) -> list[tuple[int, int, str]]:
    """(start, end, label) of every label spelling in the text, word by word up to inflection ("a woman speaks"
    names "Female speech, woman speaking", "baby cries" names "Baby cry, infant cry"; ``lemmas.same_word``, never a
    longer word that merely starts with it); the longest spelling wins where two overlap."""
    names, index = _name_index(vocabulary)
    toks = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(norm)]
    found = []
    for i, (tok, _, _) in enumerate(toks):
        for words in {w for key in (lemma(tok), tok[:3]) for w in index.get(key, ())}:
            span = [t for t, _, _ in toks[i : i + len(words)]]
            if len(span) == len(words) and all(same_word(t, w) for t, w in zip(span, words)):
                # the closest spelling: the same words, then the same lemmas ("clicking" is Clicking before Click)
                exact = (
                    sum(t == w for t, w in zip(span, words)),
                    sum(lemma(t) == lemma(w) for t, w in zip(span, words)),
                )
                found.append((i, i + len(words), names[" ".join(words)], exact))
    taken: set[int] = set()
    out = []
    # the most words first, then the closest spelling ("crowd" is the label Crowd before a form of "crowing")
    for a, b, lab, _ in sorted(found, key=lambda f: (f[0] - f[1], -f[3][0], -f[3][1], f[0], f[2])):
        if not taken & set(range(a, b)):
            taken |= set(range(a, b))
            out.append((toks[a][1], toks[b - 1][2], lab))
    return sorted(out)


# what a caption reports as said, sung or written is no sound heard: "the lyrics mention the rain", "a man talks
# about dogs", anything in double quotes; "about" only after saying, singing or telling ("the audio is about a dog
# barking" describes the sound)
_REPORTED = frozenset(
    {"mention", "mentions", "mentioning", "mentioned", "says", "saying", "said", "refers", "referring"}
    | {"referencing", "references", "про", "упоминает", "упоминается", "упоминаются", "упоминая"}
)
_TOPIC_HEADS = {"talk", "speak", "sing", "song", "lyric", "story", "chat", "tell", "joke", "lecture", "rap"}
_TOPIC_HEADS.add("singe")  # codespell:ignore singe -- simplemma's lemma of "singing"
_TOPIC_HEADS |= {"discuss", "complain", "argue", "conversation", "news", "ask", "joke", "говорить", "петь", "песня"}
_BEFORE_ABOUT = re.compile(r"([^\W\d_]+)\s+(?:about|о|об)\s*$")
_QUOTED = re.compile(r'"[^"\n]*"')


def _reported(norm: str) -> list[tuple[int, int]]:
    """The spans of a caption that report content, not sound: quotations and the clause after a reporting word."""
    spans = [(m.start(), m.end()) for m in _QUOTED.finditer(norm)]
    spans += [(s.start, s.end) for s in scopes_after(norm, _REPORTED, "reported")]
    for s in scopes_after(norm, frozenset({"about", "о", "об"}), "reported"):
        head = _BEFORE_ABOUT.search(norm[: s.start])
        if head and lemma(head.group(1)) in _TOPIC_HEADS:
            # the topic is a noun phrase: four words at most ("a song about the rain plays on a piano": the piano
            # is heard)
            words = list(_WORD.finditer(norm, s.start, s.end))[:4]
            spans.append((s.start, words[-1].end() if words else s.end))
    return spans


def named_objects(text: str, vocabulary: Sequence[str]) -> set[str]:
    """The vocabulary's labels a caption names as present: whole words up to inflection, the longest spelling first;
    a mention inside a negation's scope is not a mention ("There is no explosion, only birds." names birds only;
    halluscope.reply.negation)."""
    norm = normalize_reply(text)
    reported = _reported(norm)
    return {
        normalize_label(lab)
        for a, b, lab in _mentions(norm, tuple(vocabulary))
        if negated(norm, a, b) is None and not any(s <= a and b <= e for s, e in reported)
    }


def grounded_labels(phrase: str, labels: Sequence[str]) -> set[str]:
    """The clip labels (normalised) an extracted object phrase names, or that name it ("dog barking" and "Dog")."""
    hit = named_objects(phrase, labels)
    return hit | {normalize_label(lab) for lab in labels if named_objects(lab, [phrase])}


VOCABULARY = "vocabulary"
NOTES = {
    VOCABULARY: "objects are the file's label names found in the caption as words or their forms, mentions in a "
    "negation's scope left out (the paper extracts them with an LLM: --extractor llm:<spec>): ECHO is a lower bound, "
    "Cover counts label names only",
    "llm": "objects are the phrases the LLM extracted from each caption, each grounded when it names one of the "
    'clip\'s labels or a label names it; a synonym no label spells ("automobile" for Car) counts as '
    "hallucinated, so ECHO here is an upper bound where the vocabulary extractor's is a lower one",
}


HUMAN = "human captions"
ONTOLOGY_NOTE = (
    "ontology: {path} ({n} classes): an object is grounded by a label it names, is less specific than (an ancestor class: 'engine' for Idling) or more specific than (a descendant: 'bark' for "
    "Dog); a label is covered when its class or a descendant is named"
)
FLOOR_NOTE = (
    "human: the clip's own AudioCaps reference captions scored as predictions by the same extractor against the "
    "same labels (the floor of the metric: what a caption a person wrote scores here)"
)
COMPAT_NOTE = (
    "compat: the authors' evaluation.py averaging (per caption, then the mean over captions, in percent): "
    "ECHO_I = mean of 1 - |named & labels| / |named|, ECHO_S = mean of [ECHO_I of the caption > 0], Cover = mean of "
    "|named & labels| / |labels|; a caption naming no object counts -1 in both ECHO means, as their code does "
    "(no_object says how many); the pooled figures (halluscope's) divide summed counts instead"
)


def _ground(row: dict, labels: Sequence[str], vocab: Sequence[str], ex, ontology: Ontology | None = None) -> None:
    """Fill a caption row's named / hallucinated / covered objects (``ex``: the LLM's extraction, or None for the
    vocabulary extractor; ``ontology``: an object is also grounded by a label's ancestor or descendant class)."""
    truth = {normalize_label(x) for x in labels}
    row["n_truth"] = len(truth)
    if ex is None:
        named = named_objects(row["prediction"], vocab)
        if ontology is None:
            hall, covered = named - truth, named & truth
        else:
            hall = {n for n in named - truth if not ontology.grounds(n, truth)}
            covered = {t for t in truth if t in named or ontology.covered(t, named)}
        row.update(status="scored", named=sorted(named), hallucinated=sorted(hall), covered=sorted(covered))
        return
    row.update(extractor_raw=ex.raw)
    if ex.objects is None:
        row.update(status="unscored", reason=ex.error, named=[], hallucinated=[], covered=[])
        return
    hits = {o: grounded_labels(o, labels) for o in ex.objects}
    grounded = {o: bool(h) for o, h in hits.items()}
    if ontology is not None:  # the classes each phrase names, grounded through the hierarchy
        for o in hits:
            classes = named_objects(o, vocab)
            hits[o] |= {t for t in truth if ontology.covered(t, classes)}
            grounded[o] = grounded[o] or any(ontology.grounds(c, truth) for c in classes)
    row.update(
        status="scored",
        named=list(hits),
        hallucinated=[o for o, g in grounded.items() if not g],
        covered=sorted(set().union(*hits.values()) if hits else set()),
    )


def pooled(members: list[dict]) -> dict:
    """ECHO_I, ECHO_S and Cover from counts summed over the captions (CHAIR's definition, section 3)."""
    scored = [r for r in members if r["status"] == "scored"]
    named = sum(len(r["named"]) for r in scored)
    truths = sum(r["n_truth"] for r in scored)
    return {
        "n_captions": len(members),
        "unscored": len(members) - len(scored),
        "refusals": sum(r["status"] == "refusal" for r in members),
        "echo_i": sum(len(r["hallucinated"]) for r in scored) / named if named else None,
        "echo_s": sum(bool(r["hallucinated"]) for r in scored) / len(scored) if scored else None,
        "cover": sum(len(r["covered"]) for r in scored) / truths if truths else None,
        "objects_named": named,
    }


def per_caption(members: list[dict]) -> dict:
    """The authors' figures: each caption's CHAIR, hallucination flag and Cover, averaged over captions, in percent
    rounded to 2 decimals as their evaluation.py prints them; a caption naming nothing counts -1 in both ECHO means
    (their sentinel, kept), a clip without labels has no Cover (their code divides by zero there). A refusal is a
    caption naming nothing here, as their extraction would read it."""
    scored = [r for r in members if r["status"] in ("scored", "refusal")]
    chair: list[float] = []
    hal: list[float] = []
    cover: list[float] = []
    for r in scored:
        named = len(r["named"])
        grounded = named - len(r["hallucinated"])
        c = 1 - grounded / named if named else -1
        chair.append(c)
        hal.append(-1 if c == -1 else int(c != 0))
        if r["n_truth"]:
            cover.append(len(r["covered"]) / r["n_truth"])

    def mean(xs: list[float]) -> float | None:
        return round(sum(xs) / len(xs) * 100, 2) if xs else None

    return {
        "n_captions": len(members),
        "unscored": len(members) - len(scored),
        "echo_i": mean(chair),
        "echo_s": mean(hal),
        "cover": mean(cover),
        "no_object": sum(c == -1 for c in chair),
        "refusals": sum(r["status"] == "refusal" for r in members),
        "no_labels": len(scored) - len(cover),
    }


def _beside(figures: dict, floor: dict) -> dict:
    """A prompt's figures with the human floor of the same clips beside each score."""
    out = dict(figures)
    for k in ("echo_i", "echo_s", "cover"):
        out[f"human_{k}"] = floor[k]
    return out


def _read_predictions(path: str | Path) -> dict:
    try:
        preds = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not JSON: {exc.msg}",
            file=str(path),
            row=exc.lineno,
            fix='pass the generation output: {youtube_id: {prompt: {"prediction": ...}}}',
        ) from exc
    if not isinstance(preds, dict):
        raise InputError(
            f"expected a JSON object, got {type(preds).__name__}",
            file=str(path),
            fix='pass the generation output: {youtube_id: {prompt: {"prediction": ...}}}',
        )
    return preds


def score_kuan_captions(
    metadata: str | Path, predictions: str | Path, *, extractor=None, ontology: str | Path | None = None
) -> dict:
    """ECHO_I, ECHO_S and Cover per prompt and overall, pooled (``metrics``) and as the authors average them per
    caption (``metrics_compat``), each with the human floor beside it: the same figures for the AudioCaps reference
    captions of the same clips (``human``). ``extractor``: None (the label vocabulary, offline) or an LLMExtractor
    (``--extractor llm:<spec>``); the result names the extractor that produced its figures. ``ontology``: AudioSet's
    ontology.json; an object is also grounded by a label it is less or more specific than (closedform.ontology)."""
    meta = load_metadata(metadata)
    preds = _read_predictions(predictions)
    tree = Ontology.load(ontology) if ontology is not None else None
    vocab = sorted({lab for m in meta.values() for lab in m["labels"]})
    problems, rows = [], []
    for yid, by_prompt in preds.items():
        if yid not in meta:
            problems.append(f"{predictions}: clip '{yid}' is not in {metadata}")
            continue
        for prompt, rec in (by_prompt if isinstance(by_prompt, dict) else {}).items():
            text = rec.get("prediction") if isinstance(rec, dict) else rec
            if not isinstance(text, str):
                problems.append(f"{predictions}: clip '{yid}', prompt {prompt!r}: no 'prediction' text")
                continue
            rows.append({"youtube_id": yid, "prompt": prompt, "prediction": text})
    if not rows:
        raise InputError(
            "no prediction could be scored",
            file=str(predictions),
            fix="the JSON's clip ids must be the metadata's youtube_id values",
        )
    clips = list(dict.fromkeys(r["youtube_id"] for r in rows))
    human = [
        {"youtube_id": yid, "prompt": HUMAN, "prediction": c, "caption_index": k}
        for yid in clips
        for k, c in enumerate(meta[yid]["captions"])
    ]
    for r in rows:  # a refusal describes no audio: counted apart, never a caption that names nothing
        if refusal := find_refusal(r["prediction"]):
            r.update(status="refusal", reason=f"refusal: '{refusal}'", named=[], hallucinated=[], covered=[])
            r["n_truth"] = len({normalize_label(x) for x in meta[r["youtube_id"]]["labels"]})
    both = [r for r in rows + human if r.get("status") != "refusal"]
    extractions = extractor.extract([r["prediction"] for r in both]) if extractor is not None else None
    for k, r in enumerate(both):
        _ground(r, meta[r["youtube_id"]]["labels"], vocab, None if extractions is None else extractions[k], tree)

    human_by_clip = defaultdict(list)
    for h in human:
        human_by_clip[h["youtube_id"]].append(h)
    by = defaultdict(list)
    for r in rows:
        by[r["prompt"]].append(r)
    by["all"] = rows
    metrics, compat = {}, {}
    for p, members in by.items():
        floor = [h for yid in dict.fromkeys(r["youtube_id"] for r in members) for h in human_by_clip[yid]]
        metrics[p] = _beside(pooled(members), pooled(floor) if floor else dict.fromkeys(("echo_i", "echo_s", "cover")))
        compat[p] = _beside(
            per_caption(members), per_caption(floor) if floor else dict.fromkeys(("echo_i", "echo_s", "cover"))
        )
    no_captions = [yid for yid in clips if not meta[yid]["captions"]]
    if no_captions:
        problems.append(f"{metadata}: {len(no_captions)} scored clip(s) have no reference caption: no human floor")
    name = VOCABULARY if extractor is None else extractor.name
    return {
        "benchmark": "kuan_generative",
        "extractor": name,
        "metrics": metrics,
        "metrics_compat": compat,
        "human": {"metrics": pooled(human), "metrics_compat": per_caption(human), "n_clips": len(clips)},
        "vocabulary": len(vocab),
        "problems": problems,
        "items": rows,
        "human_items": human,
        "ontology": None if ontology is None else str(ontology),
        "notes": [
            f"extractor: {name}; " + NOTES[VOCABULARY if extractor is None else "llm"],
            FLOOR_NOTE,
            COMPAT_NOTE,
            *([ONTOLOGY_NOTE.format(path=ontology, n=len(tree.display))] if tree else []),
        ],
    }
