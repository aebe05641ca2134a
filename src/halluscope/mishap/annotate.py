"""Step 6: the human annotation app (seed 001, App. B.5) and its append-only label table.

A stdlib threading HTTP server on loopback (by default). Security model (README, "Security model"):

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

Labels go to ``mishap_annotations`` in the run's SQLite store; triggers refuse UPDATE and DELETE.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import ipaddress
import json
import logging
import os
import random
import secrets
import socket
import sqlite3
import stat
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from halluscope.errors import HalluscopeError
from halluscope.records import Groundedness, MishapAnnotation, MishapClip
from halluscope.store import STORE_NAME, Store

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mishap_annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    answer_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('grounded', 'hallucinated')),
    note TEXT NOT NULL DEFAULT '',
    mode TEXT NOT NULL,
    created REAL NOT NULL,
    save_id TEXT
);
CREATE TRIGGER IF NOT EXISTS mishap_annotations_no_update BEFORE UPDATE ON mishap_annotations
BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
CREATE TRIGGER IF NOT EXISTS mishap_annotations_no_delete BEFORE DELETE ON mishap_annotations
BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
"""
ANNOTATOR = r"^[\w .@-]{1,40}$"
MAX_NOTE = 2000
MAX_BODY = 64_000  # bytes of one save request: a full note in \uXXXX escapes fits
MAX_AUDIO = 512 * 2**20
TIMEOUT_S = 15.0  # a connection idle this long is closed and its thread freed
BACKLOG = 256  # listen queue: 200 annotators' saves arriving at once are accepted, not reset
TOKEN_HEADER = "X-Halluscope-Token"
STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/app.js": ("app.js", "text/javascript; charset=utf-8"),
          "/app.css": ("app.css", "text/css; charset=utf-8")}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; media-src 'self' blob:; connect-src 'self'; "
       "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class SaveConflict(HalluscopeError):
    """A save id already stored with a different label."""


class LabelRequest(BaseModel):
    """The body of ``POST /api/label``: strict JSON types, no unknown fields."""

    model_config = ConfigDict(extra="forbid", strict=True)

    save_id: str = Field(pattern=r"^[A-Za-z0-9_-]{8,64}$", description="Client-generated; a retry reuses it.")
    answer_id: str = Field(min_length=1, max_length=1000)
    annotator: str = Field(pattern=ANNOTATOR, description="1-40 letters, digits, spaces, . @ _ -")
    label: Groundedness
    note: str = Field(default="", max_length=MAX_NOTE)
    mode: Literal["independent", "side_by_side"] = "independent"


def _store_file(run_dir: str | Path) -> Path:
    """RUN/halluscope.sqlite, which must exist: reading labels never creates a run directory."""
    path = Path(run_dir) / STORE_NAME
    if not path.is_file():
        what = "does not exist" if not Path(run_dir).exists() else f"has no {STORE_NAME}"
        raise HalluscopeError(f"{run_dir} is not a run directory ({what}); expected the folder that 'halluscope mishap "
                              "clips' created. Fix: check the path, or run the earlier steps first")
    return path


class Annotations:
    """The append-only label table; the latest row per (answer, annotator) is the label that counts."""

    def __init__(self, run_dir: str | Path) -> None:
        path = _store_file(run_dir)
        try:
            self._db = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
            if "save_id" not in {r[1] for r in self._db.execute("PRAGMA table_info(mishap_annotations)")}:
                self._db.execute("ALTER TABLE mishap_annotations ADD COLUMN save_id TEXT")  # tables from before save ids
            self._db.execute("CREATE UNIQUE INDEX IF NOT EXISTS mishap_annotations_save_id ON mishap_annotations(save_id)")
        except sqlite3.DatabaseError as exc:
            raise HalluscopeError(f"{path}: cannot open the label table ({exc}); expected a writable halluscope "
                                  "store. Fix: check the file's permissions, or restore it from a copy") from None
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def add(self, *, answer_id: str, annotator: str, label: str, note: str = "", mode: str = "independent",
            save_id: str | None = None) -> MishapAnnotation:
        return self.save(answer_id=answer_id, annotator=annotator, label=label, note=note, mode=mode, save_id=save_id)[0]

    def save(self, *, answer_id: str, annotator: str, label: str, note: str = "", mode: str = "independent",
             save_id: str | None = None) -> tuple[MishapAnnotation, bool]:
        """Store one label; with a ``save_id`` already stored, return that row and False (a retry stores nothing)."""
        a = MishapAnnotation(answer_id=answer_id, annotator=annotator, label=label, note=note, mode=mode,  # type: ignore[arg-type]
                             created=time.time())
        with self._lock:
            if save_id is not None and (old := self._by_save_id(save_id)) is not None:
                return self._same(old, a, save_id), False
            try:
                self._db.execute("INSERT INTO mishap_annotations (answer_id, annotator, label, note, mode, created, save_id) "
                                 "VALUES (?, ?, ?, ?, ?, ?, ?)", (a.answer_id, a.annotator, a.label, a.note, a.mode,
                                                                  a.created, save_id))
            except sqlite3.IntegrityError:  # another process stored this save id in between
                old = self._by_save_id(save_id)  # type: ignore[arg-type]
                if old is None:
                    raise
                return self._same(old, a, save_id), False  # type: ignore[arg-type]
        return a, True

    def _by_save_id(self, save_id: str) -> MishapAnnotation | None:
        r = self._db.execute("SELECT answer_id, annotator, label, note, mode, created FROM mishap_annotations "
                             "WHERE save_id = ?", (save_id,)).fetchone()
        return None if r is None else MishapAnnotation(answer_id=r[0], annotator=r[1], label=r[2], note=r[3], mode=r[4],
                                                       created=r[5])

    @staticmethod
    def _same(old: MishapAnnotation, new: MishapAnnotation, save_id: str) -> MishapAnnotation:
        keys = ("answer_id", "annotator", "label", "note", "mode")
        if any(getattr(old, k) != getattr(new, k) for k in keys):
            raise SaveConflict(f"save id {save_id} was already stored with a different label "
                               f"({', '.join(f'{k}={getattr(old, k)!r}' for k in keys[:3])}); a new label needs a new save id")
        return old

    def all(self) -> list[MishapAnnotation]:
        with self._lock:
            rows = self._db.execute("SELECT answer_id, annotator, label, note, mode, created FROM mishap_annotations "
                                    "ORDER BY id").fetchall()
        return [MishapAnnotation(answer_id=r[0], annotator=r[1], label=r[2], note=r[3], mode=r[4], created=r[5]) for r in rows]

    def latest(self) -> dict[tuple[str, str], MishapAnnotation]:
        out: dict[tuple[str, str], MishapAnnotation] = {}
        for a in self.all():
            out[(a.answer_id, a.annotator)] = a
        return out


def annotation_items(run_dir: str | Path, *, sample: int | None = None,
                     seed: int = 0) -> tuple[list[dict], dict[str, MishapClip]]:
    """The responses to annotate (all judgeable answers, or a seeded sample) and clip id -> clip record."""
    from halluscope.mishap.answers import load_answers
    from halluscope.mishap.clips import kept_clips
    from halluscope.mishap.judge import judgeable
    from halluscope.mishap.questions import load_questions
    from halluscope.mishap.rubrics import current_rubrics

    if sample is not None and sample < 1:
        raise HalluscopeError(f"--sample: expected a positive number of responses, got {sample}. "
                              "Fix: give --sample N with N >= 1, or leave it out to annotate every response")
    _store_file(run_dir)
    with Store(run_dir) as store:
        questions, clips, rubrics = load_questions(store), kept_clips(store), current_rubrics(store)
        answers = sorted((a for a in load_answers(store).values() if judgeable(a) and a.question_id in questions),
                         key=lambda a: a.id)
    if sample is not None and sample < len(answers):
        answers = sorted(random.Random(seed).sample(answers, sample), key=lambda a: a.id)
    items = []
    for a in answers:
        q = questions[a.question_id]
        clip = clips[q.clip_id]
        items.append({"id": a.id, "question_id": q.id, "clip_id": clip.id, "model": a.model, "domain": q.domain,
                      "category": q.category, "strategy": q.strategy, "question": q.text, "response": a.text,
                      "description": clip.description, "rubric": rubrics[q.id].text if q.id in rubrics else None})
    return items, dict(clips)


def audio_roots(run_dir: str | Path) -> list[Path]:
    """Where clips may be served from: the run directory and the folder of the imported clip manifest."""
    from halluscope.mishap._common import COMMANDS

    roots = [Path(run_dir).resolve()]
    with Store(run_dir) as store:
        m = store.latest_manifest(COMMANDS["clips"])
    if m is not None and m.config.get("manifest"):
        roots.append(Path(os.path.realpath(Path(m.config["manifest"]).parent)))
    return roots


def read_clip(clip: MishapClip, roots: Sequence[Path]) -> bytes:
    """The clip's bytes, or HalluscopeError saying why they may not be served."""
    path = Path(clip.audio)
    real = Path(os.path.realpath(path))
    if real != path:
        raise HalluscopeError(f"{path} is, or goes through, a symbolic link (to {real})")
    if not any(real.is_relative_to(r) for r in roots):
        raise HalluscopeError(f"{path} lies outside the run directory and the clip manifest's folder "
                              f"({', '.join(map(str, roots))})")
    if not clip.sha256:
        raise HalluscopeError(f"{path}: no sha256 was recorded at import; re-run 'halluscope mishap clips'")
    try:  # O_NOFOLLOW: a symlink swapped in after the check is refused; O_NONBLOCK: a FIFO does not hang us
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise HalluscopeError(f"{path} cannot be opened ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise HalluscopeError(f"{path} is not a regular file")
        if st.st_size > MAX_AUDIO:
            raise HalluscopeError(f"{path} is {st.st_size} bytes, over the {MAX_AUDIO}-byte limit")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(MAX_AUDIO + 1)
    except OSError as exc:
        raise HalluscopeError(f"{path} cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    got = hashlib.sha256(data).hexdigest()
    if got != clip.sha256:
        raise HalluscopeError(f"{path} changed since import: sha256 {got[:16]}... != recorded {clip.sha256[:16]}...; "
                              "re-run 'halluscope mishap clips' if the change is intended")
    return data


def _static(name: str) -> bytes:
    return (resources.files("halluscope") / "mishap" / "static" / name).read_bytes()


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _problems(exc: ValidationError) -> str:
    out = []
    for e in exc.errors(include_url=False):
        where = ".".join(str(p) for p in e["loc"]) or "body"
        got = e.get("input")
        shown = f"{len(got)} characters" if isinstance(got, str) and len(got) > 60 else repr(got)[:80]
        out.append(f"{where}: {e['msg']}" + ("" if e["type"] in ("json_invalid", "missing") else f" (got {shown})"))
    return "; ".join(out)


def _parse_host(host: str, allow_remote: bool) -> tuple[str, bool]:
    """The bind address without brackets, and whether it is a wildcard; HalluscopeError for a name or a remote IP."""
    bare = host.strip().strip("[]")
    try:
        ip = ipaddress.ip_address("127.0.0.1" if bare == "localhost" else bare)
    except ValueError:
        raise HalluscopeError(f"--host: expected an IP address such as 127.0.0.1 or ::1 (or 'localhost'), got {host!r}. "
                              "Fix: give the address to bind, not a host name") from None
    if not allow_remote and not ip.is_loopback:
        raise HalluscopeError(f"refusing to serve annotations on {host}: the app binds to loopback by default; "
                              "pass --allow-remote to expose it (the token still applies)")
    return bare, ip.is_unspecified


class AnnotationServer:
    """The app over one run directory; ``url`` carries the token (in its fragment) for the first visit."""

    def __init__(self, run_dir: str | Path, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                 sample: int | None = None, seed: int = 0, allow_remote: bool = False,
                 timeout_s: float = TIMEOUT_S) -> None:
        host, wildcard = _parse_host(host, allow_remote)
        if not 0 <= port <= 65535:
            raise HalluscopeError(f"--port: expected 0-65535 (0 picks a free port), got {port}")
        self.token = token or secrets.token_urlsafe(18)
        if len(self.token) < 8 or not all(c.isascii() and (c.isalnum() or c in "-_.~") for c in self.token):
            raise HalluscopeError("--token: expected at least 8 characters among letters, digits and - _ . ~")
        self.items, self.clips = annotation_items(run_dir, sample=sample, seed=seed)
        self.roots = audio_roots(run_dir)
        self.run_id = hashlib.sha256(str(Path(run_dir).resolve()).encode()).hexdigest()[:16]
        self.by_id = {i["id"]: i for i in self.items}
        self.labels = Annotations(run_dir)
        app = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "halluscope-annotate"
            sys_version = ""
            timeout = timeout_s  # socket timeout: an idle or slow client is dropped, its thread freed

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Content-Security-Policy", CSP)
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Referrer-Policy", "no-referrer")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Cross-Origin-Resource-Policy", "same-origin")
                if status >= 400:
                    self.close_connection = True
                    self.send_header("Connection", "close")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _json(self, status: int, obj: object) -> None:
                self._send(status, json.dumps(obj, ensure_ascii=False).encode(), "application/json; charset=utf-8")

            def _guard(self, *, api: bool) -> None:
                """Host, Origin, Sec-Fetch-Site for every request; the token header for the API."""
                own = app.host_port if not wildcard else None
                given_host = self.headers.get("Host", "")
                if own is not None and given_host != own or own is None and not given_host.endswith(f":{app.port}"):
                    raise _Refused(403, f"forbidden: Host {given_host!r} is not this app's {own or f'*:{app.port}'}; "
                                        f"open {app.origin}/")
                origin = self.headers.get("Origin")
                if origin is not None and origin != f"http://{given_host}":
                    raise _Refused(403, f"forbidden: cross-origin request from {origin!r}")
                site = self.headers.get("Sec-Fetch-Site")
                if api and site is not None and site not in ("same-origin", "none"):
                    raise _Refused(403, f"forbidden: {site} request")
                if api:
                    given = self.headers.get(TOKEN_HEADER)
                    if given is None or not hmac.compare_digest(given.encode("utf-8", "replace"), app.token.encode()):
                        raise _Refused(403, f"forbidden: wrong or missing token (the {TOKEN_HEADER} header)")

            def _refuse(self, exc: _Refused) -> None:
                log.info("refused %s %s from %s: %s", self.command, self.path[:200], self.client_address[0], exc.message)
                self._json(exc.status, {"error": exc.message})

            def _run(self, handler) -> None:  # type: ignore[no-untyped-def]
                """One request: a refusal is a JSON error; anything unexpected a 500 naming the log, never a traceback."""
                try:
                    handler()
                except _Refused as exc:
                    self._refuse(exc)
                except ConnectionError:  # the client went away
                    self.close_connection = True
                except TimeoutError:
                    raise  # BaseHTTPRequestHandler closes the connection
                except Exception as exc:  # noqa: BLE001
                    log.exception("internal error on %s %s", self.command, self.path[:200])
                    self._json(500, {"error": f"internal error ({type(exc).__name__}); the server's log has the details"})

            def do_GET(self) -> None:  # noqa: N802
                self._run(self._get)

            do_HEAD = do_GET

            def do_OPTIONS(self) -> None:  # noqa: N802  (a CORS preflight: never granted)
                self._run(self._options)

            def do_POST(self) -> None:  # noqa: N802
                self._run(self._post)

            def _get(self) -> None:
                parts = urlsplit(self.path)
                path = parts.path
                self._guard(api=path not in STATIC)
                if path in STATIC:  # no secret in these: the token arrives in the URL fragment
                    name, ctype = STATIC[path]
                    return self._send(200, _static(name), ctype)
                if path == "/api/items":
                    return self._json(200, {"items": app.items, "run_id": app.run_id, "max_note": MAX_NOTE})
                if path == "/api/labels":
                    who = (parse_qs(parts.query).get("annotator") or [""])[0]
                    mine = {a.answer_id: {"label": a.label, "note": a.note}
                            for (aid, w), a in app.labels.latest().items() if w == who}
                    return self._json(200, {"annotator": who, "labels": mine})
                if path.startswith("/audio/"):
                    clip_id = unquote(path[len("/audio/"):])
                    clip = app.clips.get(clip_id)  # ids only: '..', '/' or anything else is simply unknown
                    if clip is None:
                        raise _Refused(404, "not found")
                    try:
                        data = read_clip(clip, app.roots)
                    except HalluscopeError as exc:
                        log.warning("clip %s not served: %s", clip_id, exc)
                        raise _Refused(409, f"clip {clip_id} not served: {exc}") from None
                    return self._send(200, data, "audio/wav")
                raise _Refused(404, "not found")

            def _options(self) -> None:
                self._guard(api=True)
                raise _Refused(405, "method not allowed")

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding"):
                    raise _Refused(411, "length required: send Content-Length, not Transfer-Encoding")
                lengths = self.headers.get_all("Content-Length") or []
                if not lengths:
                    raise _Refused(411, "length required: no Content-Length header")
                raw = lengths[0].strip()
                if len(lengths) > 1 or not raw.isdigit() or not raw.isascii():
                    raise _Refused(400, f"Content-Length: expected one non-negative integer, got {', '.join(lengths)!r}")
                n = int(raw)
                if n > MAX_BODY:
                    raise _Refused(413, f"request body of {n} bytes is over the {MAX_BODY}-byte limit")
                return self.rfile.read(n)

            def _post(self) -> None:
                self._guard(api=True)
                if urlsplit(self.path).path != "/api/label":
                    raise _Refused(404, "not found")
                ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                if ctype != "application/json":
                    raise _Refused(415, f"Content-Type: expected application/json, got {ctype or 'none'!r}")
                try:
                    req = LabelRequest.model_validate_json(self._body())
                except ValidationError as exc:
                    raise _Refused(400, _problems(exc)) from None
                if req.answer_id not in app.by_id:
                    raise _Refused(400, f"answer_id: unknown response {req.answer_id[:80]!r} (not in this session's items)")
                try:
                    a, new = app.labels.save(**req.model_dump(exclude={"save_id"}), save_id=req.save_id)
                except SaveConflict as exc:
                    raise _Refused(409, str(exc)) from None
                return self._json(200, {"ok": True, "duplicate": not new, "save_id": req.save_id, "stored": a.model_dump()})

        family = socket.AF_INET6 if ":" in host else socket.AF_INET

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = BACKLOG
            address_family = family

            def server_bind(self) -> None:  # HTTPServer's would do a reverse DNS lookup of the address
                self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                self.socket.bind(self.server_address)
                self.server_address = self.socket.getsockname()
                self.server_name, self.server_port = host, self.server_address[1]

        try:
            self._httpd = Server((host, port), Handler)
        except OSError as exc:
            self.labels.close()
            why = {errno.EADDRINUSE: "is already in use (another annotate server?)",
                   errno.EACCES: "needs privileges (ports below 1024)",
                   errno.EADDRNOTAVAIL: "is not an address of this machine"}.get(exc.errno or 0, f"cannot be bound ({exc})")
            raise HalluscopeError(f"{host} port {port} {why}. Fix: pick another --port (0 picks a free one) "
                                  "or --host") from None
        self.host, self.port = host, self._httpd.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def host_port(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{self.host_port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/#token={self.token}"

    def start(self) -> AnnotationServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
        self._httpd.server_close()
        self.labels.close()

    def __enter__(self) -> AnnotationServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def human_labels(run_dir: str | Path) -> dict[tuple[str, str], str]:
    """(answer id, annotator) -> latest label: the input of the agreement metrics."""
    ann = Annotations(run_dir)
    try:
        return {k: a.label for k, a in ann.latest().items()}
    finally:
        ann.close()


def export_labels(run_dir: str | Path, out: str | Path, *, history: bool = False) -> int:
    """Write the latest label per (answer, annotator) (or every row with ``history``) as CSV."""
    import csv

    out = Path(out)
    if not out.parent.is_dir():
        raise HalluscopeError(f"--export {out}: the folder {out.parent} does not exist. Fix: create it, or export "
                              "into an existing folder")
    if out.is_dir():
        raise HalluscopeError(f"--export {out}: is a folder; expected a file name such as {out / 'labels.csv'}")
    ann = Annotations(run_dir)
    try:
        rows: Sequence[MishapAnnotation] = ann.all() if history else list(ann.latest().values())
    finally:
        ann.close()
    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["answer_id", "annotator", "label", "note", "mode", "created"])
            for a in rows:
                w.writerow([a.answer_id, a.annotator, a.label, a.note, a.mode, a.created])
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise HalluscopeError(f"--export {out}: cannot write ({exc.strerror}). Fix: choose a writable path") from None
    return len(rows)
