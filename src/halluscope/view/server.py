"""'halluscope view RUN': the viewer on loopback, and 'halluscope view RUN --export DIR': the same page as static
files (per-page data chunks as JS, audio copied and verified) that open from file:// with no server."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs, unquote

from pydantic import ValidationError

from halluscope.core.errors import HalluscopeError
from halluscope.core.fs import atomic_write, id_file_name
from halluscope.core.keys import AudioKey
from halluscope.core.store import StoreBusy
from halluscope.core.webapp import BUSY_S, MAX_NUMBER_DIGITS, LoopbackApp, Refused, json_reply, problems, read_verified
from halluscope.view.data import PAGE, ViewData, load_view
from halluscope.view.quality import QualityLabels, QualityRequest

log = logging.getLogger(__name__)
STATIC_FILES = ("index.html", "app.js", "app.css")
REDO = "'halluscope build spoken' (it re-renders a changed clip)"
EXPORT_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; media-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'"
)


def static(name: str) -> bytes:
    return (resources.files("halluscope") / "view" / "static" / name).read_bytes()


_TYPES = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8"}


class ViewServer(LoopbackApp):
    """The viewer over one run; ``url`` carries the token (in its fragment) for the first visit."""

    server_version = "halluscope-view"
    what = "the viewer"
    post_paths = frozenset({"/api/quality"})
    busy_s = BUSY_S  # a rating waits this long for another process's lock on the store, then 503
    static = {
        "/" if n == "index.html" else f"/{n}": (lambda n=n: static(n), _TYPES[n.rsplit(".", 1)[1]])
        for n in STATIC_FILES
    }

    def __init__(self, run_dir: str | Path, *, closedform: Sequence[str] = (), **kw: object) -> None:
        self.view: ViewData = load_view(run_dir, closedform=closedform)
        self.labels: QualityLabels | None = None
        super().__init__(**kw)  # type: ignore[arg-type]
        self.labels = QualityLabels(run_dir, busy_s=self.busy_s)

    def close(self) -> None:
        if self.labels is not None:
            self.labels.close()
            self.labels = None

    def api_get(self, path: str, query: str):  # type: ignore[no-untyped-def]
        if path == "/api/index":
            return json_reply({"meta": {**self.view.meta(), "writable": True}, **self.view.wire_index()})
        if path.startswith("/api/chunk/"):
            n = path[len("/api/chunk/") :]
            if (
                not (n.isascii() and n.isdigit())
                or len(n) > MAX_NUMBER_DIGITS
                or int(n) * PAGE >= max(len(self.view.index), 1)
            ):
                raise Refused(404, f"no data chunk {n[:20]!r}{'...' if len(n) > 20 else ''}")
            return json_reply({"chunk": int(n), "items": self.view.chunk(int(n))})
        if path == "/api/search":
            q = (parse_qs(query).get("q") or [""])[0]
            return json_reply({"q": q, "ids": self.view.search(q)})
        if path.startswith("/audio/"):
            key = unquote(path[len("/audio/") :])
            where = self.view.audio.get(key)  # keys only: '..', '/' or anything else is simply unknown
            if where is None:
                raise Refused(404, "not found")
            try:
                data = read_verified(where[0], where[1], self.view.roots, redo=REDO)
            except HalluscopeError as exc:
                log.warning("clip %s not served: %s", key, exc)
                raise Refused(409, f"clip {key} not served: {exc}") from None
            return 200, data, "audio/wav"
        raise Refused(404, "not found")

    def api_post(self, path: str, body: bytes):  # type: ignore[no-untyped-def]
        try:
            req = QualityRequest.model_validate_json(body)
        except ValidationError as exc:
            raise Refused(400, problems(exc)) from None
        pos = self.view.position.get(req.item_id)
        if pos is None or self.view.index[pos]["kind"] != "spoken" or not self.view.index[pos]["audio"]:
            raise Refused(400, f"item_id: {req.item_id[:80]!r} is no spoken item with a clip in this run")
        assert self.labels is not None
        try:
            row, new = self.labels.save(req)
        except StoreBusy as exc:
            log.warning("rating not saved yet: %s", exc)
            raise Refused(503, "store busy, retrying: another process is writing to the run's store") from None
        except HalluscopeError as exc:
            raise Refused(409, str(exc)) from None
        self.view.rated(row)
        return json_reply({"ok": True, "duplicate": not new, "save_id": req.save_id, "stored": row})


def _js(call: str, obj: object) -> str:
    # JSON is valid JS; '<' escaped so no '</script>' or '<!--' can appear in the file whatever the data holds
    return f"HALLUSCOPE.{call}({json.dumps(obj, ensure_ascii=False).replace('<', chr(92) + 'u003c')});\n"


def export_view(run_dir: str | Path, out: str | Path, *, closedform: Sequence[str] = ()) -> tuple[Path, int, int]:
    """Write the viewer to ``out`` (index.html, app.js, app.css, data/*.js, audio/*.wav); returns the page, the
    number of items and of clips copied. Every clip is checked against its recorded sha256 before it is copied."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise HalluscopeError(
            f"export folder {out}: is a file; expected a folder to write the viewer into (made if absent)"
        )
    if out.is_dir() and any(out.iterdir()) and not (out / "data" / "index.js").is_file():
        raise HalluscopeError(
            f"export folder {out}: the folder is not empty and holds no earlier export; expected a new or "
            "an earlier export folder. Fix: choose another folder"
        )
    names: dict[str, str] = {}

    def src(key: str) -> str:
        a = AudioKey.decode(key)
        names[key] = f"audio/{a.kind}/{id_file_name(a.item, '.wav')}"
        return names[key]

    view = load_view(run_dir, closedform=closedform, audio_src=src)
    for sub in ("data", "audio"):
        if (out / sub).is_dir():
            shutil.rmtree(out / sub)
    (out / "data").mkdir(parents=True, exist_ok=True)
    for name in STATIC_FILES:
        data = static(name)
        if name == "index.html":  # file:// has no response headers: the policy rides in a meta tag
            data = data.replace(
                b"<head>", f'<head>\n<meta http-equiv="Content-Security-Policy" content="{EXPORT_CSP}">'.encode(), 1
            )
        atomic_write(out / name, data)
    atomic_write(
        out / "data" / "index.js", _js("index", {"meta": {**view.meta(), "writable": False}, **view.wire_index()})
    )
    copied = 0
    for n in range(max(1, -(-len(view.index) // PAGE))):
        atomic_write(out / "data" / f"chunk-{n:05d}.js", _js("chunk", {"chunk": n, "items": view.chunk(n)}))
    for key, rel in sorted(names.items()):
        path, sha = view.audio[key]
        try:
            data = read_verified(path, sha, view.roots, redo=REDO)
        except HalluscopeError as exc:
            raise HalluscopeError(f"cannot export clip {key}: {exc}") from None
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out / rel, data)
        copied += 1
    return out / "index.html", len(view.index), copied
