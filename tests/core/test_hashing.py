"""halluscope.core.hashing gives exactly the values the helpers it replaced gave.

Stage fingerprints, request keys, clip checksums, file names and cache keys are stored in every run: a changed
value would make an existing run recompute (or miss its files). Each test below computes the old formula, as it
was written in its module before the port, next to the ported code path, on real inputs.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

import pytest

from halluscope.core import hashing
from halluscope.core.records import Article, AudioClip, ChatMessage, MishapRubric, ModelRequest

PAYLOADS = [
    {"stage": "tts", "config": {"b": 1, "a": [1.5, None, "ü"]}, "upstream": ["x"]},
    {"path": Path("/tmp/x"), "n": 3},
    [],
    "plain text",
    {"ключ": "қазақ"},
]


def test_primitives_match_hashlib():
    assert hashing.sha256_hex(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert hashing.sha256_hex("ü", 10) == hashlib.sha256("ü".encode()).hexdigest()[:10]
    assert hashing.chunks_sha256(["a", b"b", "c"]) == hashlib.sha256(b"abc").hexdigest()
    assert hashing.seed_from("x", 4) == int.from_bytes(hashlib.sha256(b"x").digest()[:4], "big")
    # the values themselves are pinned: a change here changes every stored run
    assert hashing.sha256_hex("halluscope", 16) == "5973d909da2dcd69"
    assert hashing.derived_seed(0, "split", "en") == 17738567219922805390
    assert hashing.json_sha256({"b": 1, "a": "ü"}, 16) == "13680baf89e37c78"


@pytest.mark.parametrize("payload", PAYLOADS)
def test_stage_fingerprint_is_unchanged(payload):
    from halluscope.core.stages import Stage, fingerprint

    old = hashlib.sha256(
        json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
    ).hexdigest()[:16]
    assert fingerprint(payload) == old
    stage = Stage("tts", {"voice": "en", "seed": 0}, ("abc",))
    blob = {"stage": "tts", "config": {"voice": "en", "seed": 0}, "upstream": ["abc"]}
    assert (
        stage.fingerprint
        == hashlib.sha256(json.dumps(blob, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]
    )


def test_request_key_is_unchanged():
    msgs = (ChatMessage(role="system", content="Ты судья."), ChatMessage(role="user", content="қазақ ü"))
    for audio in ((), (AudioClip(sha256="ab" * 32, seconds=1.0),)):
        req = ModelRequest(
            backend="openai/x", messages=msgs, params={"temperature": 0, "seed": 3}, nonce=1, tag="t", audio=audio
        )
        content = {
            "backend": req.backend,
            "messages": [m.model_dump() for m in req.messages],
            "params": req.params,
            "nonce": req.nonce,
        }
        if audio:
            content["audio"] = [a.sha256 for a in audio]
        old = hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
        assert req.key() == old


@pytest.mark.parametrize("item_id", ["a1", "../x", "Ü\udcff", "con", "x" * 300])
def test_id_file_names_are_unchanged(item_id):
    from halluscope.core.fs import id_file_name

    old = hashlib.sha256(item_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    assert id_file_name(item_id, ".wav").endswith(f"{old}.wav")


def test_seeds_are_unchanged():
    from halluscope.backends.speech.tts import pick_voice

    for parts in [(0, "split", "en"), (7, "a1", "fabrication", "low", 2), ()]:
        old = int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8], "big")
        assert hashing.derived_seed(*parts) == old  # was spoken.generate.base.stable_seed
    voices = ["en", "en+f3", "en+m3", "en+f4"]
    for seed, item in [(0, "a1"), (5, "ru~x~y")]:
        h = hashlib.sha256(f"{seed}:{item}".encode()).digest()
        assert pick_voice(voices, seed=seed, item_id=item) == voices[int.from_bytes(h[:4], "big") % len(voices)]
    params = {"temperature": 0.7, "seed": 1, "mitigation": "aad"}
    blob = json.dumps(params, sort_keys=True, default=str).encode()
    assert (
        hashing.seed_from(blob) % hashing.TORCH_SEED_MAX
        == int.from_bytes(hashlib.sha256(blob).digest()[:8], "big") % 2**63
    )


def _old_files_hash(refs) -> str:
    h = hashlib.sha256()
    for ref in refs:
        h.update(ref.name.encode())
        h.update(ref.read_bytes())
    return h.hexdigest()[:16]


def test_prompt_hashes_are_unchanged():
    from halluscope.mishap._common import prompts_hash
    from halluscope.prompts import _FILES, prompt_hash, template
    from halluscope.spoken.detect.zeroshot import prompt_files_hash
    from halluscope.spoken.provenance import FAITHFUL_TEMPLATE, faithful_prompt_hash

    root = resources.files("halluscope") / "prompts"
    refs = [root / "severity.json"]
    for sub in _FILES:
        refs += sorted((p for p in (root / sub).iterdir() if p.name.endswith(".txt")), key=lambda p: p.name)
    assert prompt_hash() == _old_files_hash(refs)
    detect = sorted((p for p in (root / "detect").iterdir() if p.name.endswith(".txt")), key=lambda p: p.name)
    assert prompt_files_hash() == _old_files_hash(detect)
    mishap = [
        r for r in sorted((root / "mishap").iterdir(), key=lambda p: p.name) if r.name.endswith((".txt", ".json"))
    ]
    assert prompts_hash() == _old_files_hash(mishap)
    assert faithful_prompt_hash() == hashlib.sha256(template(FAITHFUL_TEMPLATE).text.encode()).hexdigest()[:16]


def test_content_hashes_are_unchanged(tmp_path):
    from halluscope.mishap.evidence import FtsEvidence
    from halluscope.mishap.rubrics import rubric_set_hash
    from halluscope.spoken.build import _corpus_sha

    articles = [Article(id=f"a{i}", language="ru", text=f"Текст {i}") for i in range(3)]
    h = hashlib.sha256()
    for a in articles:
        h.update(a.model_dump_json().encode())
    assert _corpus_sha(articles) == h.hexdigest()[:16]

    rubrics = {
        q: MishapRubric(question_id=q, version=v, text=f"Hallucinated if {q} ü", author="me")
        for q, v in (("q2", 2), ("q1", 1))
    }
    blob = json.dumps({k: [r.version, r.text] for k, r in sorted(rubrics.items())}, ensure_ascii=False)
    assert rubric_set_hash(rubrics) == hashlib.sha256(blob.encode()).hexdigest()[:16]

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# Бета\nтекст", encoding="utf-8")
    (tmp_path / "docs" / "a.txt").write_text("Alpha\nbody", encoding="utf-8")
    ev = FtsEvidence(tmp_path / "docs")
    h = hashlib.sha256()
    for d in ev._documents():
        h.update(json.dumps(d, ensure_ascii=False, sort_keys=True).encode())
    assert ev.digest == h.hexdigest()[:16]

    f = tmp_path / "clip.wav"
    f.write_bytes(b"RIFF" + bytes(range(256)))
    assert hashing.file_sha256(f) == hashlib.sha256(f.read_bytes()).hexdigest()
    assert hashing.file_sha256(f, 16) == hashlib.sha256(f.read_bytes()).hexdigest()[:16]


def test_model_folder_identities_are_unchanged(tmp_path):
    from halluscope.backends.speech.hf import model_identity as speech_identity
    from halluscope.spoken.detect.encoder import model_identity as encoder_identity

    m = tmp_path / "model"
    (m / "sub").mkdir(parents=True)
    (m / "config.json").write_text('{"a": 1}')
    (m / "vocab.txt").write_text("a\nb")
    (m / "model.safetensors").write_bytes(b"\0" * 100)
    (m / "sub" / "big.bin").write_bytes(b"\1" * ((4 << 20) + 1))
    (m / "README.md").write_text("not hashed by the encoder")

    h = hashlib.sha256()
    for f in sorted(m.iterdir()):
        if f.is_file() and (f.suffix in (".json", ".model", ".txt") or f.name.endswith((".safetensors", ".bin"))):
            h.update(f.name.encode())
            h.update(
                f.read_bytes()
                if f.suffix != ".safetensors" and f.stat().st_size < 50_000_000
                else str(f.stat().st_size).encode()
            )
    assert encoder_identity(str(m)) == {"path": str(m.resolve()), "sha256": h.hexdigest()[:16]}

    h = hashlib.sha256()
    for f in sorted(x for x in m.rglob("*") if x.is_file()):
        size = f.stat().st_size
        h.update(f"{f.relative_to(m).as_posix()}:{size}".encode())
        if size < 4 << 20:
            h.update(f.read_bytes())
    assert speech_identity(str(m)) == {"model": str(m), "files_sha256": h.hexdigest()[:16]}


def test_ray_temp_dir_is_unchanged(tmp_path):
    from halluscope.core.executors import ray_temp_dir

    deep = tmp_path / ("d" * 120)
    digest = hashlib.sha256(str(deep.resolve()).encode()).hexdigest()[:10]
    assert ray_temp_dir(deep).name == f"hs-ray-{digest}"
