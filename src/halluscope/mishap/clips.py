"""Step 1: the clip manifest (domain, source, audio, description), the App. A.1 informativeness filter, domain balance."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from halluscope.backends.llm import LLM_BACKENDS, Caller, CallStats, ChatBackend, LLMConfig, load_llm_config
from halluscope.backends.runner import ask_until_parsed, run_calls
from halluscope.core.errors import InputError, ItemError, Problems
from halluscope.core.fs import confined
from halluscope.core.hashing import file_sha256
from halluscope.core.inputs import Field, read_rows
from halluscope.core.manifest import record_manifest
from halluscope.core.records import MISHAP_DOMAINS, ChatMessage, Informativeness, MishapClip
from halluscope.core.stages import Stage
from halluscope.core.store import Store
from halluscope.mishap._common import COMMANDS, VERSION, prompt, prompts_hash, strategy_texts
from halluscope.reply import read_check

CLIPS_STAGE = "mishap.clips"
PROVENANCE = ("source_id", "license", "split")  # optional manifest columns (mishap/sources.py writes them)
FILTER_STAGE = "mishap.informative"
FILTER_PARAMS = {"temperature": 0, "max_tokens": 200}


def read_audio(path: str | Path) -> tuple[np.ndarray, int]:
    """Float32 mono samples and the rate of a clip (WAV, FLAC, OGG): halluscope.backends.speech.audio.read_audio."""
    from halluscope.backends.speech.audio import read_audio as read

    return read(path, fix="fix the 'audio' field of the clip manifest")


CLIP_FIELDS = (
    *(Field(f) for f in ("id", "domain", "source", "audio", "description")),
    *(Field(f, required=False) for f in ("description_kind", *PROVENANCE)),
)


def load_manifest(path: str | Path, *, audio_root: str | Path | None = None) -> list[MishapClip]:
    """Clips from .jsonl, .csv, .tsv or .parquet with id, domain, source, audio, description[, description_kind].

    Audio paths are confined to ``audio_root``, else the manifest's folder (relative paths are taken from the
    manifest's folder; a path outside is a problem of its row, never read: core.fs.confined), and stored resolved; each file's
    duration and sha256 are read now, so a missing or corrupt clip fails here, not in the middle of a run.
    Every problem of the manifest is reported together (reading rules: halluscope.core.inputs).
    """
    p = Path(path)
    problems = Problems(str(p))
    clips: list[MishapClip] = []
    seen: dict[str, int] = {}
    for r in read_rows(p, CLIP_FIELDS, what="clip manifest", problems=problems).rows:
        n, row = r.number, {k: v.strip() for k, v in r.values.items() if v is not None}
        row = {k: v for k, v in row.items() if v or k not in PROVENANCE}  # an empty provenance cell: not given
        if row["domain"] not in MISHAP_DOMAINS:
            problems.add(f"domain '{row['domain']}' is not one of {', '.join(MISHAP_DOMAINS)}", row=n, field="domain")
            continue
        if row["id"] in seen:
            problems.add(f"duplicate clip id '{row['id']}' (first at row {seen[row['id']]})", row=n, field="id")
            continue
        seen[row["id"]] = n
        audio = confined(
            row["audio"],
            audio_root if audio_root is not None else p.parent,
            file=p,
            row=n,
            problems=problems,
            what="--audio-root" if audio_root is not None else "the manifest's folder",
            base=p.parent,
        )
        if audio is None:
            continue
        try:
            samples, rate = read_audio(audio)
            row.update(audio=str(audio.resolve()), duration_s=round(len(samples) / rate, 3), sha256=file_sha256(audio))
        except (ItemError, OSError) as exc:
            problems.add(
                str(exc),
                row=n,
                field="audio",
                fix="give a readable WAV/FLAC/OGG file, absolute or relative to the manifest's folder",
            )
            continue
        try:
            clips.append(MishapClip.model_validate(row))
        except ValidationError as exc:
            for e in exc.errors():
                problems.add(f"{e['msg']} (got {e.get('input')!r})", row=n, field=".".join(map(str, e["loc"])) or None)
    problems.raise_if_any(
        "clip manifest",
        fix="every clip needs id, domain (music|sound|speech), source, audio and "
        "description, all strings; description_kind is caption, transcript or metadata",
    )
    if not clips:
        raise InputError("the manifest has no clips", file=str(p), fix="add one clip per row")
    return clips


def informativeness_messages(clip: MishapClip) -> list[ChatMessage]:
    text = prompt("informativeness").render(
        {
            "DOMAIN": clip.domain,
            "DESCRIPTION KIND": clip.description_kind,
            "DOMAIN RUBRIC": strategy_texts()["informativeness"][clip.domain],
            "DESCRIPTION": clip.description,
        }
    )
    return [ChatMessage(role="user", content=text)]


def parse_informativeness(text: str | None) -> tuple[bool | None, str | None]:
    """(informative, the judge's reason), or (None, why unreadable): the last answer for 'informative'."""
    return read_check(text, "informative")


async def _assess(caller: Caller, backend: ChatBackend, clip: MishapClip, retries: int) -> Informativeness | str:
    def parse(resp):
        verdict, reason = parse_informativeness(resp.text)
        return ((verdict, reason), None) if verdict is not None else (None, reason)

    asked = await ask_until_parsed(
        caller,
        backend.request(informativeness_messages(clip), tag=f"mishap.informative:{clip.id}", params=FILTER_PARAMS),
        parse,
        retries,
    )
    if asked.status == "failed":
        return asked.failure
    if asked.ok:
        verdict, reason = asked.value
        return Informativeness(
            clip_id=clip.id,
            status="ok",
            informative=verdict,
            reason=reason,
            raw_text=asked.raw_text,
            call_keys=asked.keys,
        )
    return Informativeness(
        clip_id=clip.id, status="unscored", reason=asked.reason, raw_text=asked.raw_text, call_keys=asked.keys
    )


@dataclass
class ClipsResult:
    clips: dict[str, MishapClip]
    kept: list[str]
    dropped: dict[str, str]
    balance: list[dict]
    stages: dict[str, str]
    stats: CallStats = field(default_factory=CallStats)
    short: list[str] = field(default_factory=list)  # quotas a domain or source could not fill
    filtered: int = 0  # clips dropped by the informativeness filter
    filter_failed: dict[str, str] = field(default_factory=dict)  # clips the filter could not assess: id -> why

    def lines(self) -> list[str]:
        """What the CLI shows: counts, then a warning per unfilled quota."""
        over = len(self.dropped) - self.filtered
        return [
            f"{len(self.clips)} clips, {len(self.kept)} kept, {self.filtered} dropped by the informativeness "
            f"filter" + (f", {over} over the quotas" if over else "")
        ] + [f"warning: quota not filled: {line}" for line in self.short]


def domain_balance(clips: dict[str, MishapClip], kept: list[str]) -> list[dict]:
    """Clips per domain and source, before and after the filter, with each domain's share of the kept set."""
    before = Counter((c.domain, c.source) for c in clips.values())
    after = Counter((clips[i].domain, clips[i].source) for i in kept)
    n = max(len(kept), 1)
    rows = []
    for domain in MISHAP_DOMAINS:
        for (d, source), count in sorted(before.items()):
            if d == domain:
                rows.append(
                    {"domain": d, "source": source, "clips": count, "kept": after[(d, source)], "share_kept": None}
                )
        rows.append(
            {
                "domain": domain,
                "source": "(all)",
                "clips": sum(v for (d, _), v in before.items() if d == domain),
                "kept": sum(v for (d, _), v in after.items() if d == domain),
                "share_kept": sum(v for (d, _), v in after.items() if d == domain) / n,
            }
        )
    return rows


def apply_quotas(
    clips: dict[str, MishapClip],
    kept: list[str],
    *,
    per_domain: int | None = None,
    per_source: int | dict[str, int] | None = None,
    seed: int = 0,
) -> tuple[list[str], dict[str, str], list[str]]:
    """Enforce the curation quotas on the clips the filter kept (seed 001, 3.1 and Fig. 3a: balanced domains, two
    sources each): at most ``per_source`` clips of a source (one number for all, or source -> number), then at most
    ``per_domain`` of a domain, taken from its sources in turn; each in a seeded order. Returns the kept ids (in
    manifest order), the ids dropped with why, and a shortfall line for every quota a domain or source cannot fill."""
    import random

    rng = random.Random(seed)
    by_source: dict[tuple[str, str], list[str]] = {}
    for cid in kept:
        by_source.setdefault((clips[cid].domain, clips[cid].source), []).append(cid)
    if isinstance(per_source, dict):
        unknown = sorted(set(per_source) - {src for _, src in by_source})
        if unknown:
            raise InputError(
                f"the per-source quota names source(s) {unknown} that no kept clip has; the kept sources are "
                f"{sorted({src for _, src in by_source})}",
                field="per_source",
                fix="spell each source as the manifest's 'source' column does",
            )
    dropped: dict[str, str] = {}
    short: list[str] = []
    queues: dict[str, list[list[str]]] = {}
    for (domain, source), ids in sorted(by_source.items()):
        ids = sorted(ids)
        rng.shuffle(ids)
        cap = per_source.get(source) if isinstance(per_source, dict) else per_source
        if cap is not None:
            if len(ids) < cap:
                short.append(f"source {source} ({domain}): {len(ids)} informative clips, quota {cap}")
            for cid in ids[cap:]:
                dropped[cid] = f"over the per-source quota ({cap} for {source})"
            ids = ids[:cap]
        queues.setdefault(domain, []).append(ids)
    if per_domain is not None:
        for domain in MISHAP_DOMAINS:
            sources = [list(q) for q in queues.get(domain, [])]
            take: list[str] = []
            while len(take) < per_domain and any(sources):
                for q in sources:
                    if q and len(take) < per_domain:
                        take.append(q.pop(0))
            if len(take) < per_domain:
                short.append(
                    f"domain {domain}: {len(take)} clips after the filter and source quotas, quota {per_domain}"
                )
            for q in sources:
                for cid in q:
                    dropped[cid] = f"over the per-domain quota ({per_domain} for {domain})"
    return [c for c in kept if c not in dropped], dropped, short


def import_clips(
    run_dir: str | Path,
    manifest: str | Path,
    *,
    filter_llm: str | None = None,
    retries: int = 2,
    per_domain: int | None = None,
    per_source: int | dict[str, int] | None = None,
    seed: int = 0,
    config: LLMConfig | None = None,
    quiet: bool = False,
    audio_root: str | Path | None = None,
    allow_partial: bool | None = None,
) -> ClipsResult:
    """Store the manifest's clips, run the informativeness filter (when an LLM is given), enforce the per-domain and
    per-source quotas on what it kept (``apply_quotas``) and record the step. ``allow_partial`` (None: the caller
    judges): the one rule of core/outcome.py over the filter's calls, applied before the step is recorded."""
    for name, v in (
        ("--per-domain", per_domain),
        *(
            (f"--per-source {k}", n)
            for k, n in (per_source.items() if isinstance(per_source, dict) else [("", per_source)])
        ),
    ):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise InputError(f"expected a positive number of clips, got {v!r}", field=name.strip())
    clips = load_manifest(manifest, audio_root=audio_root)
    with Store(run_dir) as store:
        # provenance fields enter the fingerprint only when given: manifests without them keep their fingerprints
        clip_stage = Stage(
            CLIPS_STAGE,
            {
                "version": VERSION,
                "clips": [c.model_dump(exclude={k for k in PROVENANCE if getattr(c, k) is None}) for c in clips],
            },
        )
        for c in clips:
            store.put(clip_stage.name, clip_stage.fingerprint, c.id, c)
        by_id = {c.id: c for c in clips}
        stages = {"clips": clip_stage.fingerprint}
        dropped: dict[str, str] = {}
        stats = CallStats()
        if filter_llm:
            backend = LLM_BACKENDS.create(filter_llm, config=config if config is not None else load_llm_config())
            st = Stage(
                FILTER_STAGE,
                {
                    "version": VERSION,
                    **backend.identity(),
                    "params": FILTER_PARAMS,
                    "retries": retries,
                    "prompts": prompts_hash(),
                },
                (clip_stage.fingerprint,),
            )

            async def fn(caller: Caller, clip: MishapClip) -> Informativeness | str:
                return await _assess(caller, backend, clip, retries)

            res = run_calls(
                store,
                st,
                [(c.id, c) for c in clips],
                backend,
                fn,
                Informativeness,
                description="informativeness",
                quiet=quiet,
            )
            stats = res.stats
            stages["informative"] = st.fingerprint
            for cid in by_id:
                j = res.results.get(cid)
                if cid in res.failed:
                    dropped[cid] = f"filter call failed: {res.failed[cid]}"
                elif j is None or j.status == "unscored":
                    dropped[cid] = f"filter reply unreadable: {j.reason if j else '?'}"
                elif not j.informative:
                    dropped[cid] = f"uninformative: {j.reason}"
            if allow_partial is not None:
                from halluscope.core.outcome import StepOutcome, check_outcomes

                outcome = StepOutcome.of(
                    res,
                    step="informativeness filter",
                    fix=f"check the filter model {filter_llm} (its server and key), then run the same command again",
                )
                kept_in = f"in {run_dir} (the step is not recorded; a rerun retries only the failed clips)"
                check_outcomes([outcome], command="mishap clips", allow_partial=allow_partial, kept=kept_in)
        kept = [c.id for c in clips if c.id not in dropped]
        n_filtered = len(dropped)
        short: list[str] = []
        if per_domain is not None or per_source is not None:
            kept, over, short = apply_quotas(by_id, kept, per_domain=per_domain, per_source=per_source, seed=seed)
            dropped.update(over)
        balance = domain_balance(by_id, kept)
        quotas = {"per_domain": per_domain, "per_source": per_source, "seed": seed, "short": short}
        record_manifest(
            store,
            command=COMMANDS["clips"],
            config={
                "manifest": str(Path(manifest).resolve()),
                "filter_llm": filter_llm,
                "retries": retries,
                "kept": kept,
                "dropped": dropped,
                "balance": balance,
                **({"quotas": quotas} if per_domain is not None or per_source is not None else {}),
            },
            seeds={"quotas": seed} if per_domain is not None or per_source is not None else {},
            stages=stages,
        )
        failed = {cid: dropped[cid] for cid in (res.failed if filter_llm else ())}
        return ClipsResult(by_id, kept, dropped, balance, stages, stats, short, n_filtered, failed)


def kept_clips(store: Store) -> dict[str, MishapClip]:
    """The clips the latest 'mishap clips' kept, by id, in manifest order."""
    from halluscope.mishap._common import upstream

    m = store.latest_manifest(COMMANDS["clips"])
    stages = upstream(store, "clips")
    clips = store.results(CLIPS_STAGE, stages["clips"], MishapClip)
    from halluscope.core.runs import config_of

    return {i: clips[i] for i in config_of(m).kept if i in clips}  # type: ignore[arg-type]
