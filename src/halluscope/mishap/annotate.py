"""Step 6: the human annotation app (seed 001, App. B.5) and its append-only label table.

A stdlib threading HTTP server on loopback (by default), halluscope.core.webapp's LoopbackApp, shared with the sample
viewer. Security model (docs/tutorials/mishap.md, "Security model"):

* The printed URL carries a per-session token in its fragment (``/#token=...``), which browsers never send to a
  server; the page moves it into ``sessionStorage`` (per origin, so other ports never see it) and sends it in the
  ``X-Halluscope-Token`` header, which cross-site forms and ``no-cors`` fetches cannot set. No cookie at all.
* Every request: ``Host`` must be the bound host:port (DNS rebinding), ``Origin`` (when present) the app's own
  origin, ``Sec-Fetch-Site`` (when present) same-origin or none. Writes need ``application/json`` (else 415), a
  valid ``Content-Length`` (absent 411, not a number or negative 400, over the limit 413) and a strict body.
* Sockets time out (an idle connection frees its thread); the listen backlog is :data:`BACKLOG`.
* A clip is served only from a regular file (no symlink anywhere on its path) inside the run directory or the
  clip manifest's folder, and only when its sha256 equals the one recorded at import (else 409, logged).
* A save carries a client-generated ``save_id``: a retried save is stored once (the UI queues labels in
  ``localStorage`` and retries until the server acknowledges them).

Labels go to ``mishap_annotations`` in the run's SQLite store (halluscope.core.store.Store's label methods);
triggers refuse UPDATE and DELETE.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, unquote

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from halluscope.core.errors import HalluscopeError
from halluscope.core.fs import atomic_path
from halluscope.core.hashing import sha256_hex
from halluscope.core.records import Groundedness, MishapAnnotation, MishapClip
from halluscope.core.store import STORE_NAME, SaveConflict, Store, StoreBusy  # noqa: F401 - SaveConflict: re-exported
from halluscope.core.webapp import (  # noqa: F401
    BACKLOG,
    BUSY_S,
    CSP,
    MAX_AUDIO,
    MAX_BODY,
    TIMEOUT_S,
    TOKEN_HEADER,
    LoopbackApp,
    Refused,
    Reply,
    json_reply,
    parse_host,
    problems,
    read_verified,
)
from halluscope.mishap.labels import Annotations, _store_file, annotation_items, human_labels, sample_by_model  # noqa: F401 - the app's label store, re-exported

log = logging.getLogger(__name__)

ANNOTATOR = r"^[\w .@-]{1,40}$"
MAX_NOTE = 2000
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/disagreements": ("disagreements.html", "text/html; charset=utf-8"),  # the refinement view (disagree_view)
    "/disagreements.js": ("disagreements.js", "text/javascript; charset=utf-8"),
}


class LabelRequest(BaseModel):
    """The body of ``POST /api/label``: strict JSON types, no unknown fields."""

    model_config = ConfigDict(extra="forbid", strict=True)

    save_id: str = Field(pattern=r"^[A-Za-z0-9_-]{8,64}$", description="Client-generated; a retry reuses it.")
    answer_id: str = Field(min_length=1, max_length=1000)
    annotator: str = Field(pattern=ANNOTATOR, description="1-40 letters, digits, spaces, . @ _ -")
    label: Groundedness
    note: str = Field(default="", max_length=MAX_NOTE)
    mode: Literal["independent", "side_by_side"] = "independent"


def audio_roots(run_dir: str | Path) -> list[Path]:
    """Where clips may be served from: the run directory and the folder of the imported clip manifest."""
    from halluscope.core.runs import config_of
    from halluscope.mishap._common import COMMANDS

    roots = [Path(run_dir).resolve()]
    with Store(run_dir) as store:
        m = store.latest_manifest(COMMANDS["clips"])
    manifest = config_of(m).manifest if m is not None else None
    if manifest:
        roots.append(Path(os.path.realpath(Path(manifest).parent)))
    return roots


def read_clip(clip: MishapClip, roots: Sequence[Path]) -> bytes:
    """The clip's bytes, or HalluscopeError saying why they may not be served."""
    return read_verified(
        clip.audio,
        clip.sha256,
        roots,
        redo="'halluscope mishap clips'",
        since="import",
        roots_name="the run directory and the clip manifest's folder",
    )


def _static(name: str) -> bytes:
    return (resources.files("halluscope") / "mishap" / "static" / name).read_bytes()


class AnnotationServer(LoopbackApp):
    """The app over one run directory; ``url`` carries the token (in its fragment) for the first visit."""

    server_version = "halluscope-annotate"
    what = "annotations"
    static = {path: (lambda name=name: _static(name), ctype) for path, (name, ctype) in STATIC.items()}
    post_paths = frozenset({"/api/label"})

    def __init__(
        self,
        run_dir: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        sample: int | None = None,
        seed: int = 0,
        allow_remote: bool = False,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        parse_host(host, allow_remote, self.what)  # before any work: a remote address is refused at once
        self.labels: Annotations | None = None
        self.items, self.clips = annotation_items(run_dir, sample=sample, seed=seed)
        self.roots = audio_roots(run_dir)
        self.run_id, self.run_dir = sha256_hex(str(Path(run_dir).resolve()), 16), Path(run_dir)
        self.by_id = {i["id"]: i for i in self.items}
        self.labels = Annotations(run_dir, busy_s=BUSY_S)
        super().__init__(host=host, port=port, token=token, allow_remote=allow_remote, timeout_s=timeout_s)

    def close(self) -> None:
        if self.labels is not None:
            self.labels.close()
            self.labels = None

    def api_get(self, path: str, query: str) -> Reply:
        if path == "/api/items":
            return json_reply({"items": self.items, "run_id": self.run_id, "max_note": MAX_NOTE})
        if path == "/api/labels":
            assert self.labels is not None
            who = (parse_qs(query).get("annotator") or [""])[0]
            mine = {
                a.answer_id: {"label": a.label, "note": a.note}
                for (aid, w), a in self.labels.latest().items()
                if w == who
            }
            return json_reply({"annotator": who, "labels": mine})
        if path == "/api/disagreements":  # the refinement view (mishap/disagree_view.py)
            from halluscope.mishap.disagree_view import reply

            return reply(self.run_dir)
        if path.startswith("/audio/"):
            clip_id = unquote(path[len("/audio/") :])
            clip = self.clips.get(clip_id)  # ids only: '..', '/' or anything else is simply unknown
            if clip is None:
                raise Refused(404, "not found")
            try:
                data = read_clip(clip, self.roots)
            except HalluscopeError as exc:
                log.warning("clip %s not served: %s", clip_id, exc)
                raise Refused(409, f"clip {clip_id} not served: {exc}") from None
            return 200, data, "audio/wav"
        raise Refused(404, "not found")

    def api_post(self, path: str, body: bytes) -> Reply:
        try:
            req = LabelRequest.model_validate_json(body)
        except ValidationError as exc:
            raise Refused(400, problems(exc)) from None
        if req.answer_id not in self.by_id:
            raise Refused(400, f"answer_id: unknown response {req.answer_id[:80]!r} (not in this session's items)")
        assert self.labels is not None
        try:
            a, new = self.labels.save(
                **req.model_dump(exclude={"save_id"}),
                save_id=req.save_id,
                response=self.by_id[req.answer_id].get("response") or "",
            )
        except SaveConflict as exc:
            raise Refused(409, str(exc)) from None
        except StoreBusy as exc:
            log.warning("label not saved yet: %s", exc)
            raise Refused(503, "store busy, retrying: another process is writing to the run's store") from None
        return json_reply({"ok": True, "duplicate": not new, "save_id": req.save_id, "stored": a.model_dump()})


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # OWASP, CSV injection: cells a spreadsheet would run


def csv_cell(text: str) -> str:
    """A text cell a spreadsheet shows as text: one starting with = + - @ tab or CR gets a leading ' (OWASP)."""
    return "'" + text if text.startswith(FORMULA_START) else text


def export_labels(run_dir: str | Path, out: str | Path, *, history: bool = False) -> int:
    """Write the latest label per (answer, annotator) (or every row with ``history``) as CSV."""
    import csv

    out = Path(out)
    if not out.parent.is_dir():
        raise HalluscopeError(
            f"export file {out}: the folder {out.parent} does not exist. Fix: create it, or export "
            "into an existing folder"
        )
    if out.is_dir():
        raise HalluscopeError(f"export file {out}: is a folder; expected a file name such as {out / 'labels.csv'}")
    ann = Annotations(run_dir)
    try:
        rows: Sequence[MishapAnnotation] = ann.all() if history else list(ann.latest().values())
    finally:
        ann.close()
    try:
        with atomic_path(out) as tmp, tmp.open("w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["answer_id", "annotator", "label", "note", "mode", "created"])
            for a in rows:
                w.writerow([csv_cell(a.answer_id), csv_cell(a.annotator), a.label, csv_cell(a.note), a.mode, a.created])
    except OSError as exc:
        raise HalluscopeError(
            f"export file {out}: cannot write ({exc.strerror}). Fix: choose a writable path"
        ) from None
    return len(rows)
