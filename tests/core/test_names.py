"""One name per role (issue 24 item 6): the renamed library names (GenerateOptions.retries, the zero-shot option
max_tokens, AudioDelivery.audio_policy) keep every stored run resuming, and the old spellings still read.

store_before_renames/ was written by the code before the renames (its make_store.py says how): an LLM-generated
build with '[generate] max_attempts = 2' and a zero-shot detect run with '-o max_new_tokens=32'."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from halluscope.backends.llm import GenerateOptions
from halluscope.core.names import RenamedWarning
from halluscope.core.records import AudioDelivery
from halluscope.core.runs import latest_runs
from halluscope.core.store import Store

OLD = Path(__file__).parent / "data" / "store_before_renames"


def _make_store():
    spec = importlib.util.spec_from_file_location("make_store", OLD / "make_store.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.make


@pytest.fixture
def old_run(tmp_path, monkeypatch) -> Path:
    for name in ("HALLUSCOPE_LLM_CONFIG", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.setenv(name, "")  # make() sets them; monkeypatch puts the originals back
    shutil.copytree(OLD / "run", tmp_path / "run")
    return tmp_path


def _stored(run: Path) -> dict:
    with Store(run, create=False) as store:
        build = store.latest_manifest("build spoken")
        det = store.latest_manifest("detect")
        return {
            "generate": build.stages["generate"],
            "detect": det.stages["detect"],  # type: ignore[union-attr]
            "options": det.config["options"],
        }  # type: ignore[union-attr]


@pytest.mark.parametrize("spelling", ["new", "old"])
def test_a_store_written_before_the_renames_resumes_with_no_model_call(old_run, spelling):
    stored = _stored(old_run / "run")
    assert stored["options"] == {"max_new_tokens": 32}  # the fixture really holds the old spelling
    if spelling == "old":
        with pytest.warns(RenamedWarning) as said:
            got = _make_store()(old_run, old=True)
        lines = {str(w.message) for w in said}
        assert any("'max_attempts' in the LLM config's [generate] is now 'retries'" in line for line in lines)
        assert any("'max_new_tokens' in detect's options is now 'max_tokens'" in line for line in lines)
    else:
        got = _make_store()(old_run, old=False)
    assert got["calls"] == 0, "a renamed field changed a stage key: the stored run was asked again"
    assert (got["generate"], got["detect"]) == (stored["generate"], stored["detect"])
    assert got["predictions"] == 4
    with Store(old_run / "run", create=False) as store:
        runs = latest_runs(store, "detect")
    # the old manifest and the rerun are one run (one row), read under the current name
    assert len(runs) == 1 and runs[0].config.options == {"max_tokens": 32}


def test_old_names_read_as_the_new_ones():
    with pytest.warns(RenamedWarning, match="'max_attempts' in the LLM config's"):
        assert GenerateOptions.model_validate({"max_attempts": 3}).retries == 2
    assert GenerateOptions().retries == 2  # the same default as max_attempts = 3
    with pytest.raises(ValueError, match="name the same setting"):
        GenerateOptions.model_validate({"max_attempts": 3, "retries": 2})
    stored = {"policy": "chunk", "window_s": 30.0, "duration_s": 45.0, "action": "chunked", "chunks": 2}
    delivery = AudioDelivery.model_validate(stored)  # a prediction stored before the rename
    assert delivery.audio_policy == "chunk"
    assert json.loads(delivery.model_dump_json())["audio_policy"] == "chunk"


def test_chat_request_key_is_unchanged():
    # the key of a text request as main computed it before ChatMessage.as_dict replaced model_dump in key()
    from halluscope.core.records import ModelRequest

    r = ModelRequest(
        backend="openai/gpt-4o-mini",
        messages=(
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Qu\u2019est-ce que « l\u2019IA » ?"},
        ),
        params={"temperature": 0.0, "max_tokens": 64, "seed": 1},
        nonce=1,
        tag="t",
    )
    assert r.key() == "57b3d060b3a4a610d46677cd044a72b5e881e1f03f4dc8802ead051beb4d1e69"
    assert [m.as_dict() for m in r.messages] == [m.model_dump() for m in r.messages]
    assert [list(m.as_dict()) for m in r.messages] == [list(m.model_dump()) for m in r.messages]  # body order
