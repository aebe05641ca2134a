"""Large open models through vLLM's OpenAI-compatible server, reached as 'openai/<served name>'.

Nothing vLLM-specific is needed to *use* a vLLM server: point the 'openai' backend at it
(``OPENAI_BASE_URL=http://host:8000/v1``, ``OPENAI_API_KEY=EMPTY``, or ``base_url`` in the LLM config)
and name the model as vLLM serves it (``openai/Qwen/Qwen2-Audio-7B-Instruct``). Audio requests go as
``input_audio`` content parts, which vLLM accepts for its audio models.

:func:`serve` starts ``vllm serve`` for a local model and stops it when the run ends. UNVERIFIED against a
real vLLM (not installed where this was written): the start / wait / stop logic is tested with a stand-in
executable that speaks the same two endpoints (/health, /v1/models).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from halluscope.core.errors import HalluscopeError


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ready(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/v1/models", timeout=2) as r:
            return r.status == 200 and bool(json.loads(r.read()).get("data"))
    except (urllib.error.URLError, OSError, ValueError):
        return False


@contextmanager
def serve(
    model: str | Path,
    *,
    served_name: str,
    port: int | None = None,
    args: Sequence[str] = (),
    binary: str = "vllm",
    timeout_s: float = 900.0,
    log: Path | None = None,
) -> Iterator[str]:
    """Run ``vllm serve MODEL`` on loopback until the block ends; yields its OpenAI base URL (…/v1).

    Weights load for minutes on a large model, hence the long ``timeout_s``; the server's output goes
    to ``log`` (default: a temp file named in the error if it does not come up).
    """
    exe = shutil.which(binary)
    if exe is None:
        raise HalluscopeError(
            f"'{binary}' is not on PATH: install vLLM on a GPU machine (pip install vllm), or start "
            "a server yourself and set OPENAI_BASE_URL=http://HOST:PORT/v1 and OPENAI_API_KEY=EMPTY"
        )
    port = port or _free_port()
    base = f"http://127.0.0.1:{port}"
    log = log or Path(os.environ.get("TMPDIR", "/tmp")) / f"halluscope-vllm-{port}.log"
    cmd = [
        exe,
        "serve",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--served-model-name",
        served_name,
        *args,
    ]
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout_s
        while not _ready(base):
            if proc.poll() is not None:
                raise HalluscopeError(f"vllm serve exited with code {proc.returncode} before it was ready; see {log}")
            if time.monotonic() > deadline:
                raise HalluscopeError(f"vllm serve was not ready after {timeout_s:.0f} s; see {log}")
            time.sleep(0.5)
        yield f"{base}/v1"
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the server's own process group (vLLM starts engine subprocesses), SIGKILL after 30 s."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


@contextmanager
def serving(spec: str, model_path: str | Path | None, **kwargs: object) -> Iterator[str | None]:
    """For 'openai/<name>' with a local model: serve it under <name> and point the openai backend at it."""
    if model_path is None:
        yield None
        return
    from halluscope.core.spec import ModelSpec

    parsed, name = ModelSpec.written(spec)  # the served name as written
    if parsed.provider != "openai" or not name:
        raise HalluscopeError(
            f"serving a model with vLLM needs an 'openai/<name>' model spec (vLLM speaks the OpenAI protocol), "
            f"got '{spec}'"
        )
    with serve(model_path, served_name=name, **kwargs) as url:  # type: ignore[arg-type]
        saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
        os.environ["OPENAI_BASE_URL"] = url
        os.environ.setdefault("OPENAI_API_KEY", "EMPTY")  # vLLM ignores it unless started with --api-key
        try:
            yield url
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
