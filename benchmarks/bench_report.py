"""The report and the viewer at paper scale (issue 27): 'halluscope report RUN' and the viewer's first page and
page 20 over a run of 12,000 spoken items, each beside the time to read the store alone.

    .venv/bin/python benchmarks/bench_report.py [--items 12000] [--repeats 1] [--smoke]

The run is written through the project's own store and records, as the pipeline leaves it:

- a spoken build (``--items`` samples: a third originals from the demo corpus's articles, two rewrites of each,
  every type and severity; App. A.1 self-assessments; a clip and a transcript with WER/CER per sample) stored as
  'build spoken' stores it (Variant, RewriteLog, AudioRef, Transcript rows and the manifest);
- two judges: the real 'build judge' with two openai/ judges against a loopback chat server (tests/support);
- four detectors: the real 'detect' with TF-IDF on text and on transcripts, and two zero-shot runs whose
  predictions point at raw replies in the calls table (what 'detect --detector openai/...' leaves);
- a MISHAP section: the real clips -> questions -> rubrics -> answers -> judge pipeline on the scripted server.

Timed (best of ``--repeats``, 3 by default; the sources byte-compiled first, as a user's first run leaves them):
reading the store alone (every stored record of the run validated into its class, and every call's reply);
'halluscope report RUN' as a user runs it (a fresh process); the viewer as 'halluscope view RUN' serves it, in a
process of its own as that command runs (not this one, which holds what building the run left): from the server
built over the run to /api/index and /api/chunk/0 fetched over HTTP and parsed (the first page; Python's parse
stands in for the browser's), then /api/chunk/19 (page 20); the interpreter's start and imports are not counted.
Goals: report <= 10 s, viewer first page <= 2 s at 12,000 items.
"""

from __future__ import annotations

import argparse
import compileall
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

from _ratios import ratio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the loopback chat server and the scripted MISHAP 'LLM' the tests use

TOKEN = "bench-report-token"
SPOKEN_JUDGES = ("openai/judge-a", "openai/judge-b")
ZERO_SHOT = ("openai/detector-a", "openai/detector-b")


def _articles(n: int, rng: random.Random) -> list[tuple[str, str, str]]:
    """``n`` (id, language, text) articles of about 200 words: three demo-corpus articles of one language each."""
    rows = [
        json.loads(line)
        for line in (resources.files("halluscope") / "data" / "demo_corpus.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
        if line.strip()
    ]
    by_lang: dict[str, list[str]] = {}
    for r in rows:
        by_lang.setdefault(r["language"], []).append(r["text"])
    langs = sorted(by_lang)
    return [
        (f"{lang}-{i:05d}", lang, " ".join(rng.sample(by_lang[lang], 3)))
        for i in range(n)
        for lang in [langs[i % len(langs)]]
    ]


def write_spoken(run: Path, n_items: int, rng: random.Random) -> None:
    """A spoken build of ``n_items`` samples through Store.put and record_manifest, as 'build spoken' leaves it."""
    from halluscope.core.hashing import sha256_hex
    from halluscope.core.manifest import record_manifest
    from halluscope.core.records import (
        SEVERITIES,
        TYPES,
        AudioRef,
        Change,
        RewriteAttempt,
        RewriteLog,
        SelfAssessment,
        Transcript,
        Variant,
    )
    from halluscope.core.stages import Stage
    from halluscope.core.store import Store
    from halluscope.metrics.asr import item_scores
    from halluscope.prompts.protocol import DIMENSIONS
    from halluscope.spoken.generate.llm import LOG_STAGE
    from support.scripted import tone

    gen = "openai/generator"
    ingest = Stage("ingest", {"corpus": "bench", "n": n_items})
    generate = Stage("generate", {"generator": gen, "seed": 13}, (ingest.fingerprint,))
    tts = Stage("tts", {"tts": "espeak"}, (generate.fingerprint,))
    asr = Stage("asr", {"asr": "whisper/base"}, (tts.fingerprint,))
    wav = tone(0.2)
    wav_sha = sha256_hex(wav)
    (run / "audio").mkdir(parents=True, exist_ok=True)
    cells = [(t, s) for t in TYPES for s in SEVERITIES]
    with Store(run) as store:
        record_manifest(
            store,
            command="build spoken",
            config={
                "corpus": "bench",
                "langs": ["en", "kk", "ru"],
                "generator": gen,
                "tts": "espeak",
                "asr": "whisper/base",
                "seed": 13,
                "rewrites_per_article": 2,
            },
            seeds={"generate": 13, "voices": 13},
            stages={s.name: s.fingerprint for s in (ingest, generate, tts, asr)},
        )
        store._db.execute("BEGIN")  # one transaction for the bulk write (each put is its own otherwise)
        for n, (aid, lang, text) in enumerate(_articles(max(1, n_items // 3), rng)):
            samples = [Variant(id=aid, article_id=aid, language=lang, text=text, label=0, generator="original")]
            store.put(ingest.name, ingest.fingerprint, aid, samples[0])
            words = text.split()
            for r in range(2):
                typ, sev = cells[(2 * n + r) % len(cells)]
                at = rng.randrange(len(words))
                new = f"{rng.randint(2, 9999)}"
                rewritten = " ".join(words[:at] + [new] + words[at + 1 :])
                v = Variant(
                    id=f"{aid}~{typ}~{sev}",
                    article_id=aid,
                    language=lang,
                    text=rewritten,
                    label=1,
                    type=typ,
                    severity=sev,
                    generator=gen,
                    seed=13,
                    changes=(Change(kind="number", before=words[at], after=new, sentence=-1),),
                    checks={"changed": True, "length": True},
                )
                store.put(generate.name, generate.fingerprint, v.id, v)
                dims = DIMENSIONS[typ]
                sa = SelfAssessment(
                    item_id=v.id,
                    generator=gen,
                    language=lang,
                    type=typ,
                    severity=sev,
                    ratings={d.abbr: rng.randint(2, 5) for d in dims},
                    verbal={d.abbr: "High" for d in dims},
                )
                store.put(
                    LOG_STAGE,
                    generate.fingerprint,
                    v.id,
                    RewriteLog(
                        item_id=v.id,
                        generator=gen,
                        accepted=True,
                        self_assessment=sa,
                        attempts=(RewriteAttempt(nonce=0, call_key=f"gen-{v.id}", status="accepted"),),
                    ),
                )
                samples.append(v)
            for v in samples[:n_items]:
                rel = f"audio/{v.id.replace('~', '_')}.wav"
                (run / rel).write_bytes(wav)
                store.put(
                    tts.name,
                    tts.fingerprint,
                    v.id,
                    AudioRef(
                        item_id=v.id,
                        path=rel,
                        sha256=wav_sha,
                        sample_rate=16_000,
                        duration_s=0.2,
                        engine=f"espeak/{v.language}",
                        voice=v.language,
                        text_sha256=sha256_hex(v.text.encode()),
                    ),
                )
                ws = v.text.split()
                heard = " ".join(w for w in ws if rng.random() > 0.06)  # an ASR that drops about 6% of the words
                store.put(
                    asr.name,
                    asr.fingerprint,
                    v.id,
                    Transcript(
                        item_id=v.id,
                        language=v.language,
                        text=heard,
                        asr="whisper/base",
                        audio_sha256=wav_sha,
                        audio_duration_s=0.2,
                        processing_s=0.1,
                        **item_scores(v.text, heard),  # WER, CER and edit counts, as the build keeps them
                    ),
                )
        store._db.execute("COMMIT")


def write_zero_shot(run: Path, spec: str, rng: random.Random) -> None:
    """A zero-shot detect run as 'detect --detector openai/...' stores it: raw replies in the calls table."""
    from halluscope.core.manifest import record_manifest
    from halluscope.core.provenance import detect_inputs
    from halluscope.core.records import Prediction
    from halluscope.core.stages import Stage
    from halluscope.core.store import Store
    from halluscope.current import read_parts
    from halluscope.spoken.build import load_build
    from halluscope.spoken.detect.splits import split_by_article

    with Store(run) as store:
        b = load_build(store)
        splits = split_by_article(b.samples.values(), seed=0)
        stage = Stage("detect", {"detector": spec, "task": "binary", "input": "text"}, (b.stages["asr"],))
        store._db.execute("BEGIN")
        for k, v in sorted(b.samples.items()):
            key = f"{spec}-call-{k}"
            reply = rng.choice(("hallucinated", "original", "The article is original.", "I cannot tell."))
            store.log_call(
                key=key,
                backend=spec,
                request={"messages": [{"role": "user", "content": v.text}]},
                response={"choices": [{"message": {"content": reply}}]},
                status="ok",
                latency_s=0.4,
            )
            gold = "hallucinated" if v.label else "original"
            label = "hallucinated" if "hallucinated" in reply else "original" if "original" in reply else None
            store.put(
                stage.name,
                stage.fingerprint,
                k,
                Prediction(
                    item_id=k,
                    detector=spec,
                    task="binary",
                    input="text",
                    split=splits[v.article_id],
                    gold=gold,
                    predicted=label,
                    status="ok" if label else "unparsable",
                    answer=label,
                    reason=None if label else "no label in the reply",
                    call_key=key,
                    zero_shot=True,
                ),
            )
        store._db.execute("COMMIT")
        record_manifest(
            store,
            command="detect",
            config={"detector": spec, "task": "binary", "input": "text", "seed": 0, "options": {}},
            seeds={"split": 0},
            stages={"detect": stage.fingerprint, **b.stages},  # as 'detect' records them: what it read
            inputs=detect_inputs(store, **read_parts(b.stages, None), input="text"),
        )


def judge_script(req: dict, n: int):  # type: ignore[no-untyped-def]
    """The App. A.2 judge's reply: a JSON object rating every dimension the prompt asks for."""
    from halluscope.prompts.protocol import DIMENSIONS
    from support.chat_server import Reply, user_text

    prompt = user_text(req)
    for dims in DIMENSIONS.values():
        if all(f'"{d.name}"' in prompt for d in dims):
            return Reply(content=json.dumps({d.name: 1 + (n + i) % 5 for i, d in enumerate(dims)}))
    return Reply(content="No rating.")


def build_run(tmp: Path, n_items: int) -> Path:
    from halluscope.backends.llm import LLMConfig
    from halluscope.spoken.detect import detect
    from halluscope.spoken.judge.run import build_judge
    from support import scripted
    from support.chat_server import ChatServer

    rng = random.Random(0)
    run = scripted.build_run(tmp)  # MISHAP: clips, questions, rubrics, answers (two seeds), judge
    write_spoken(run, n_items, rng)
    for inp in ("text", "transcript"):
        detect(run, task="binary", input=inp)
    for spec in ZERO_SHOT:
        write_zero_shot(run, spec, rng)
    old = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    with ChatServer(judge_script) as srv:
        os.environ.update(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="k")
        try:
            build_judge(run, SPOKEN_JUDGES, per_cell=8, config=LLMConfig(openai={"max_retries": 0}), quiet=True)
        finally:
            for k, v in old.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return run


def read_store(run: Path) -> int:
    """Every stored record validated into its class, and every call's reply decoded: the floor any reader pays."""
    from halluscope.core import records
    from halluscope.core.store import Store

    n = 0
    with Store(run, create=False, readonly=True) as store:
        for kind, payload in store._db.execute("SELECT kind, payload FROM results WHERE status='ok'"):
            getattr(records, kind).model_validate_json(payload)
            n += 1
        for c in store.calls():
            n += c["response"] is not None
    return n


def get(port: int, path: str) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", path, headers={"X-Halluscope-Token": TOKEN, "Host": f"127.0.0.1:{port}"})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    if r.status != 200:
        raise SystemExit(f"GET {path}: {r.status} {body[:300]!r}")
    return json.loads(body)


def view_pages(run: Path) -> tuple[float, float, int, int]:
    """Seconds to the first page (server built over the run, the index and chunk 0 fetched) and to page 20 (the
    last page of a smaller run); the number of items and the later page's number."""
    from halluscope.view.server import ViewServer

    t0 = time.perf_counter()
    with ViewServer(run, token=TOKEN) as srv:
        doc = get(srv.port, "/api/index")
        index = [dict(zip(doc["columns"], row)) for row in doc["rows"]]  # the objects the page makes of it
        first = get(srv.port, "/api/chunk/0")["items"]
        t_first = time.perf_counter() - t0
        later = min(19, (len(index) - 1) // 50)
        t1 = time.perf_counter()
        page = get(srv.port, f"/api/chunk/{later}")["items"]
        t_later = time.perf_counter() - t1
    assert first and page and all(d["id"] == k for k, d in first.items()), "a page came back empty"
    rewrites = [d for d in first.values() if d["kind"] == "spoken" and d["label"] == 1]
    assert rewrites and all(
        d["self_assessment"] and d["transcript"]["alignment"] and len(d["predictions"]) >= 2 for d in rewrites
    ), "a rewrite's detail lacks its self-assessment, alignment or predictions"
    return t_first, t_later, len(index), later + 1


def view_in_own_process(run: Path, env: dict) -> tuple[float, float, int, int]:
    """view_pages in a fresh interpreter, as 'halluscope view RUN' serves the run."""
    code = f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_report as b; "
    code += "print(json.dumps(b.view_pages(b.Path(sys.argv[1]))))"
    proc = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True, env=env)
    if proc.returncode:
        raise SystemExit(f"the viewer failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
    t_first, t_later, n, page = json.loads(proc.stdout.strip().splitlines()[-1])
    return t_first, t_later, n, page


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=12000)
    ap.add_argument("--repeats", type=int, default=3, help="timings repeated, the best kept (a shared machine)")
    ap.add_argument("--smoke", action="store_true", help="300 spoken items, one repeat (the test suite's run)")
    ap.add_argument("--keep", type=Path, help="build the run in this new folder and keep it (to profile it after)")
    a = ap.parse_args()
    if a.smoke:
        a.items, a.repeats = 300, 1
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        run = build_run(a.keep or Path(tmp), a.items)
        print(f"built {run} in {time.perf_counter() - t0:.1f} s", flush=True)
        # the sources byte-compiled once, as Python does on a user's first run (pip does it at install); where
        # PYTHONDONTWRITEBYTECODE is set (this machine) every 'halluscope report' would otherwise compile them anew
        compileall.compile_dir(ROOT / "src" / "halluscope", quiet=1)
        t_read = t_report = t_first = t_later = float("inf")
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            n_read = read_store(run)
            t_read = min(t_read, time.perf_counter() - t0)
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "halluscope", "report", str(run)], capture_output=True, text=True, env=env
            )
            t_report = min(t_report, time.perf_counter() - t0)
            if proc.returncode:
                raise SystemExit(
                    f"halluscope report failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
                )
            f, later, n_index, page_no = view_in_own_process(run, env)
            t_first, t_later = min(t_first, f), min(t_later, later)
        doc = json.loads((run / "report" / "headline.json").read_text(encoding="utf-8"))
        titles = [s["title"] for s in doc["sections"]]
    print(
        f"store: {n_read} records and replies read in {t_read:.2f} s; report: {len(titles)} sections, "
        f"{len(doc['tables'])} tables in {t_report:.2f} s; viewer: {n_index} items, first page {t_first:.2f} s, "
        f"page {page_no} {t_later:.2f} s",
        flush=True,
    )
    print("sections: " + "; ".join(titles))
    missing = [w for w in ("MISHAP", "judge", "detect") if not any(w.lower() in t.lower() for t in titles)]
    if missing:
        raise SystemExit(f"the report has no section about {missing}: {titles}")
    ratio(
        f"report seconds at {a.items} spoken items",
        t_report,
        "<= 10",
        smoke=a.smoke,
        unit=" s",
        note=f"reading the store alone {t_read:.2f} s",
    )
    ratio("report seconds / reading the store alone", t_report / t_read)
    ratio(
        f"viewer first page seconds at {a.items} spoken items",
        t_first,
        "<= 2",
        smoke=a.smoke,
        unit=" s",
        note=f"reading the store alone {t_read:.2f} s",
    )
    ratio("viewer first page / reading the store alone", t_first / t_read)
    ratio(f"viewer page {page_no} seconds", t_later, unit=" s", note=f"reading the store alone {t_read:.2f} s")


if __name__ == "__main__":
    main()
