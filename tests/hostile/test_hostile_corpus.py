"""The hostile-file corpus (tests/hostile/files, written by make_corpus.py; expected.json says what each must give):
every file through the real CLI in this process either exits 2 with one message naming the problem, or is read
correctly (the count it must give, the clip's real duration); none hangs (10 s each)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from support.hostile_helpers import flat, run_cli

FILES = Path(__file__).resolve().parent / "files"
EXPECTED: dict[str, dict] = json.loads((FILES / "expected.json").read_text(encoding="utf-8"))
HANG_S = 10.0


def test_the_corpus_holds_over_100_files_each_with_what_it_must_give():
    assert len(EXPECTED) >= 100
    for rel, exp in EXPECTED.items():
        assert (FILES / rel).is_file(), rel
        assert exp["expect"] in ("ok", "error")
    kinds = {rel.split("/")[0] for rel in EXPECTED}
    assert kinds == {"corpus", "config", "wav", "manifest", "closedform"}


def _within(fn, *args):
    """fn(*args) on a thread; a failure if it has not returned in HANG_S seconds (a hang, not a speed check)."""
    out: dict = {}

    def go():
        try:
            out["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            out["error"] = exc

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(HANG_S)
    assert not t.is_alive(), f"still running after {HANG_S} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def _one_message(code: int, out: str, says: list[str], rel: str) -> None:
    text = flat(out)
    assert code == 2, f"{rel}: exit {code}: {out}"
    assert "Traceback" not in out and "internal error" not in out, out
    assert text.count("error:") == 1, out
    for needle in says:
        assert flat(needle) in text, f"{rel}: {needle!r} not in: {out}"


def _manifest_for(tmp: Path, audio: Path) -> Path:
    m = tmp / "one.csv"
    m.write_text(f"id,domain,source,audio,description\nc1,sound,s,{audio},a dog barks twice\n", encoding="utf-8")
    return m


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_hostile_file(rel, tmp_path, capsys, monkeypatch):
    exp, path, kind = EXPECTED[rel], FILES / rel, rel.split("/")[0]
    for k, v in exp.get("env", {}).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("HALLUSCOPE_LLM_CONFIG", raising=False)
    run = tmp_path / "run"
    if kind == "corpus":
        code, out = _within(run_cli, capsys, monkeypatch, "corpus", "check", path)
        if exp["expect"] == "ok":
            assert code == 0 and f"ok: {exp['n']} articles" in out, out
            return
    elif kind == "config":
        if exp["expect"] == "ok":
            from halluscope.backends.llm import load_llm_config

            cfg = _within(load_llm_config, path)
            assert cfg.model_dump()["openai"]["base_url"] == "http://127.0.0.1:9/v1"
            return
        code, out = _within(
            run_cli,
            capsys,
            monkeypatch,
            "mishap",
            "clips",
            run,
            "--manifest",
            FILES / "manifest" / "ok.csv",
            "--audio-root",
            FILES,
            "--filter-llm",
            "openai/x",
            "--llm-config",
            path,
        )
    elif kind in ("wav", "manifest"):
        # the clips lie beside the manifests (files/wav): --audio-root names the folder they are confined to
        manifest = _manifest_for(tmp_path, path) if kind == "wav" else path
        code, out = _within(
            run_cli, capsys, monkeypatch, "mishap", "clips", run, "--manifest", manifest, "--audio-root", FILES
        )
        if exp["expect"] == "ok":
            assert code == 0 and f"{exp['n']} clips, {exp['n']} kept" in flat(out), out
            if kind == "wav":  # read correctly: the stored duration is the file's own
                import soundfile as sf

                from halluscope.mishap.clips import load_manifest

                info = sf.info(str(path))
                assert (
                    load_manifest(manifest, audio_root=FILES)[0].duration_s
                    == round(info.frames / info.samplerate, 3)
                    > 0
                )
            return
    else:  # closedform: the set's rows, audio confined to the set's folder
        from halluscope.closedform.run import load_rows

        fmt = "yesno" if path.suffix == ".tsv" else "halluaudio"
        if exp["expect"] == "ok":
            rows = _within(load_rows, fmt, [path], None)
            assert len(rows) == exp["n"] and all(r.audio.is_relative_to(path.parent.resolve()) for r in rows)
            return
        code, out = _within(
            run_cli, capsys, monkeypatch, "run", "closedform", run, path, "--model", "openai/x", "--format", fmt
        )
    assert exp["expect"] == "error", f"{rel}: expected ok, got exit {code}: {out}"
    _one_message(code, out, exp["says"], rel)


def test_a_fifo_never_hangs_a_reader(tmp_path, capsys, monkeypatch):
    """Files made at run time: a named pipe as the corpus, as a clip and as an LLM config (nothing writes to it)."""
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    code, out = _within(run_cli, capsys, monkeypatch, "corpus", "check", fifo)
    _one_message(code, out, ["not a regular file"], "fifo corpus")
    wav = tmp_path / "pipe.wav"
    os.mkfifo(wav)
    code, out = _within(
        run_cli,
        capsys,
        monkeypatch,
        "mishap",
        "clips",
        tmp_path / "run",
        "--manifest",
        _manifest_for(tmp_path, wav),
        "--audio-root",
        tmp_path,
    )
    _one_message(code, out, ["field 'audio'"], "fifo clip")
    cfg = tmp_path / "pipe.toml"
    os.mkfifo(cfg)
    code, out = _within(
        run_cli,
        capsys,
        monkeypatch,
        "mishap",
        "clips",
        tmp_path / "run2",
        "--manifest",
        FILES / "manifest" / "ok.csv",
        "--filter-llm",
        "openai/x",
        "--llm-config",
        cfg,
    )
    _one_message(code, out, [], "fifo config")


def test_a_100000_column_header_is_checked_at_once(tmp_path, capsys, monkeypatch):
    big = tmp_path / "wide.csv"
    big.write_text(",".join(f"c{i}" for i in range(100_000)) + ",id,language,text,c7\nx\n", encoding="utf-8")
    code, out = _within(run_cli, capsys, monkeypatch, "corpus", "check", big)
    _one_message(code, out, ["c7 appear more than once"], "wide header")


def test_build_refuses_a_corpus_whose_rewrite_ids_collide(tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    code, out = _within(
        run_cli,
        capsys,
        monkeypatch,
        "build",
        "spoken",
        run,
        "--corpus",
        FILES / "corpus" / "derived_id_collision.jsonl",
        "--tts",
        "hostile-tts",
        "--asr",
        "hostile-asr",
    )
    _one_message(code, out, ["row 2", "row 1", "rewrite of article 'x'", "rename one of the two"], "build")
    assert not (run / "dataset").exists()


@pytest.mark.parametrize("where", ["dotdot", "absolute", "symlink"])
def test_clip_manifest_audio_outside_its_folder_is_refused_not_read(where, tmp_path, capsys, monkeypatch):
    """A clip manifest from elsewhere cannot make halluscope read (and send to a model) a file outside its folder
    (or --audio-root): '../', an absolute path and a symlink pointing out are each one problem of their row."""
    import shutil

    secret = tmp_path / "secret.wav"
    shutil.copy(FILES / "wav" / "ok_16k_mono.wav", secret)
    (tmp_path / "set").mkdir()
    audio = {"dotdot": "../secret.wav", "absolute": str(secret), "symlink": "link.wav"}[where]
    if where == "symlink":
        (tmp_path / "set" / "link.wav").symlink_to(secret)
    manifest = tmp_path / "set" / "clips.csv"
    manifest.write_text(f"id,domain,source,audio,description\nc1,sound,s,{audio},a dog barks\n", encoding="utf-8")
    code, out = _within(run_cli, capsys, monkeypatch, "mishap", "clips", tmp_path / "run", "--manifest", manifest)
    _one_message(code, out, ["outside the manifest's folder", "row 2", "--audio-root"], f"clip {where}")
    # the same file given its folder as --audio-root is read
    code, out = _within(
        run_cli,
        capsys,
        monkeypatch,
        "mishap",
        "clips",
        tmp_path / "run2",
        "--manifest",
        manifest,
        "--audio-root",
        tmp_path,
    )
    assert code == 0, out
