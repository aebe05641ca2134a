"""Run any registered audio model on a closed-form set (HalluAudio, AHa-Bench, yes/no object hallucination) and
write its replies in the format 'halluscope score halluaudio|aha|yesno' reads.

Replies are raw text: the scorers extract answers. Every request and reply is stored in a SQLite store next
to the output, so a rerun makes no calls. A row whose call failed, whose audio could not be read or was
skipped by the policy is written without a reply field (or left out of the yes/no CSV): the scorer then reports
it as a load problem instead of scoring it, and the summary counts it.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from halluscope.backends.speech.audio import read_audio
from halluscope.core.errors import HalluscopeError, ItemError, Problems
from halluscope.core.fs import confined
from halluscope.core.inputs import Field, read_rows
from halluscope.core.keys import ClosedFormItemKey
from halluscope.core.records import AudioDelivery, ChatMessage, ModelResponse
from halluscope.core.spec import ModelSpec

Format = Literal["halluaudio", "aha", "yesno"]
REPLY_FIELD = {"halluaudio": "pred", "aha": "prediction", "yesno": "response"}
AUDIO_FIELDS = ("audio", "audio_path", "wav", "path")


@dataclass
class Row:
    """One question of the set: where its audio is, what to ask, and the input row to write back."""

    id: str
    audio: Path
    prompt: str
    data: dict


@dataclass
class RunSummary:
    """What a closed-form run did: rows answered, failed, skipped; audio handling; calls made."""

    out: Path
    store: Path
    rows: int = 0
    answered: int = 0
    status: Counter = field(default_factory=Counter)
    actions: Counter = field(default_factory=Counter)
    delivered: int = 0
    calls: int = 0
    from_store: int = 0

    def as_dict(self) -> dict:
        return {
            "out": str(self.out),
            "store": str(self.store),
            "rows": self.rows,
            "answered": self.answered,
            "status": dict(self.status),
            "audio": dict(self.actions),
            "audio_delivered": self.delivered,
            "calls": self.calls,
            "from_store": self.from_store,
        }


def _resolve(audio: str, root: Path | None, base: Path, problems: Problems, row: int, file: Path) -> Path | None:
    """The audio path of a row confined to --audio-root, else the set file's folder (core.fs.confined)."""
    return confined(
        audio,
        root or base,
        file=file,
        row=row,
        problems=problems,
        what="--audio-root" if root is not None else "the questions file's folder",
    )


def _fields(fmt: str) -> tuple[Field, ...]:
    if fmt == "yesno":
        return (Field("entry_id"), Field("audio_index"), Field("prompt_text"))
    ask = "prompt" if fmt == "halluaudio" else "question"
    # ids of published files may be numbers: read as text ('scalar'); every other field must be a string
    return (
        Field(ask),
        Field("id", "scalar", required=False),
        Field("index", "scalar", required=False),
        *(Field(k, required=False) for k in AUDIO_FIELDS),
    )


def load_rows(fmt: str, inputs: list[Path], audio_root: Path | None) -> list[Row]:
    """The questions of ``inputs`` with their audio paths (relative paths: under --audio-root, else the file's folder).
    The yes/no set is a TSV (a leading '#' comment block is skipped), the others JSONL whatever their suffix; every
    problem of every file is reported together (reading rules: halluscope.core.inputs)."""
    rows: list[Row] = []
    problems = Problems()
    for path in inputs:
        if fmt == "yesno":
            table = read_rows(
                path, _fields(fmt), what="yes/no questions file", format="tsv", comments=True, problems=problems
            )
            for r in table.rows:
                name = r.values["audio_index"].strip()
                name = name if Path(name).suffix else f"{name}.wav"
                # Kuan et al.: entry ids are unique only within a sampling strategy, so the item is (sampling, id)
                entry, sampling = r.values["entry_id"].strip(), str(r.raw.get("sampling") or "").strip()
                if (where := _resolve(name, audio_root, path.parent, problems, r.number, path)) is not None:
                    rows.append(
                        Row(
                            str(ClosedFormItemKey(entry, sampling or None)), where, r.values["prompt_text"], dict(r.raw)
                        )
                    )
            continue
        ask = "prompt" if fmt == "halluaudio" else "question"
        for r in read_rows(path, _fields(fmt), what=f"{fmt} questions file", format="jsonl", problems=problems).rows:
            v = r.values
            audio = next((v[k] for k in AUDIO_FIELDS if k in v), None)
            if audio is None and fmt == "aha" and "index" in v:
                audio = "_".join(v["index"].split("_")[:2]) + ".wav"  # '<type id>_<audio id>.wav'
            if audio is None:
                problems.add(
                    f"no audio path: the row needs one of {', '.join(AUDIO_FIELDS)}",
                    row=r.number,
                    field=AUDIO_FIELDS[0],
                    file=str(path),
                    fix=f"give each row an audio path in '{AUDIO_FIELDS[0]}'"
                    + (" or an AHa-Bench 'index'" if fmt == "aha" else ""),
                )
                continue
            item_id = v.get("id") or v.get("index") or f"{path.name}:{r.number}"
            if (where := _resolve(audio, audio_root, path.parent, problems, r.number, path)) is not None:
                rows.append(Row(item_id, where, v[ask], r.raw))
    asked = {"yesno": "prompt_text", "halluaudio": "prompt"}.get(fmt, "question")
    problems.raise_if_any(f"{fmt} questions", fix=f"each row needs '{asked}' and an audio path, as strings")
    return rows


def run_closedform(
    model: ModelSpec | str,
    fmt: str,
    inputs: list[Path],
    *,
    out: Path,
    audio_root: Path | None = None,
    audio_policy: str = "truncate",
    system: str | None = None,
    max_tokens: int = 256,
    llm_config: str | None = None,
    store_dir: Path | None = None,
    backend_options: dict | None = None,
    quiet: bool = False,
    executor: Any = None,
    allow_partial: bool | None = None,
) -> RunSummary:
    """Ask ``model`` every question of the set with its clip, and write the scorer's input format to ``out``;
    ``executor`` (e.g. a RayExecutor) runs an hf-audio model's generation on its workers. ``allow_partial`` (None:
    the caller judges): the one rule of core/outcome.py over the rows (a row with no reply failed; one the audio
    policy skipped did not), applied before ``out`` is written (a failed run writes nothing; its calls are kept)."""
    from halluscope.backends.audio_lm import ask_audio, audio_window_s, check_policy, create_audio_backend
    from halluscope.backends.llm import Caller, load_llm_config
    from halluscope.backends.runner import run_calls
    from halluscope.core.executors import place
    from halluscope.core.store import Store

    spec = ModelSpec.parse(model)  # parsed once at the entry (a ModelSpec from the command line, or its text)
    model = spec.text
    if fmt not in REPLY_FIELD:
        raise HalluscopeError(f"unknown format '{fmt}': expected halluaudio, aha or yesno")
    check_policy(audio_policy)
    rows = load_rows(fmt, list(inputs), audio_root)
    backend = place(create_audio_backend(spec, config=load_llm_config(llm_config), **(backend_options or {})), executor)
    window = audio_window_s(backend)
    store_dir = store_dir or out.with_name(out.name + ".store")
    summary = RunSummary(out=out, store=store_dir, rows=len(rows))

    async def ask(caller: Caller, row: Row) -> tuple[ModelResponse | None, AudioDelivery | None, str | None]:
        msgs = ([ChatMessage(role="system", content=system)] if system else []) + [
            ChatMessage(role="user", content=row.prompt)
        ]
        request = backend.request(
            msgs, tag=f"closedform:{fmt}:{row.id}", params={"max_tokens": max_tokens, "temperature": 0}
        )
        try:
            clip = read_audio(row.audio)
        except ItemError as exc:
            return None, None, str(exc)
        got = await ask_audio(caller, request, clip, audio_policy, window)
        return got.response, got.delivery, None

    with Store(store_dir) as store:  # no stage: the replies file is the output; the store answers repeated calls
        res = run_calls(
            store,
            None,
            [(str(i), row) for i, row in enumerate(rows)],
            backend,
            ask,
            description=f"{fmt} {model}",
            quiet=quiet,
        )
    summary.calls, summary.from_store = res.stats.calls, res.stats.from_store
    replies = {int(i): r for i, r in res.results.items()}
    out.parent.mkdir(parents=True, exist_ok=True)
    log_rows = []
    for i, row in enumerate(rows):
        response, delivery, error = replies[i]
        status = response.status if response is not None else ("skipped" if delivery is not None else "no audio")
        summary.status[status] += 1
        if delivery is not None:
            summary.actions[delivery.action] += 1
            summary.delivered += bool(delivery.delivered)
        ok = response is not None and response.status == "ok" and response.text is not None
        summary.answered += ok
        log_rows.append(
            {
                "id": row.id,
                "status": status,
                "reason": error or (response.error if response else None),
                "call_key": response.key if response else None,
                "audio": delivery.model_dump() if delivery else None,
                "ok": ok,
                "reply": response.text if ok else None,
            }
        )
    if allow_partial is not None:
        from halluscope.core.outcome import StepOutcome, check_outcomes

        failed = {log["id"]: log["reason"] or "no reply" for log in log_rows if log["status"] in ("error", "no audio")}
        outcome = StepOutcome(
            f"{fmt} {model}",
            len(log_rows),
            len(log_rows) - len(failed),
            failed,
            fix=f"check the model's server or weights, then run the same command again; nothing was written to {out}",
        )
        kept = f"in {summary.store} (a rerun makes no call for the rows answered)"
        check_outcomes([outcome], command="run closedform", allow_partial=allow_partial, kept=kept)
    _write(fmt, out, rows, log_rows)
    delivery_log = out.with_name(out.name + ".delivery.jsonl")
    delivery_log.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in log_rows), encoding="utf-8")
    return summary


def _write(fmt: str, out: Path, rows: list[Row], log_rows: list[dict]) -> None:
    field_name = REPLY_FIELD[fmt]
    if fmt == "yesno":
        with out.open("w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            sampled = any(row.data.get("sampling") for row in rows)
            w.writerow(["entry_id", "audio_index", *(["sampling"] if sampled else []), "response"])
            for row, log in zip(rows, log_rows):
                if log["ok"]:
                    w.writerow(
                        [
                            row.data.get("entry_id", row.id),
                            row.data.get("audio_index", ""),
                            *([row.data.get("sampling", "")] if sampled else []),
                            log["reply"],
                        ]
                    )
        return
    with out.open("w", encoding="utf-8") as fh:
        for row, log in zip(rows, log_rows):
            data = {k: v for k, v in row.data.items() if k != field_name}
            if log["ok"]:
                data[field_name] = log["reply"]
            fh.write(json.dumps(data, ensure_ascii=False) + "\n")
