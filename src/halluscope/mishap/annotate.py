"""Step 6: the human annotation app (seed 001, App. B.5) and its append-only label table.

A stdlib HTTP server on loopback (by default) behind a token: the annotator opens ``/?token=...`` once,
which sets an HttpOnly cookie; every other request without the token gets 403. It serves a fixed set of
static files, JSON for the items and labels, and the clip of an item by clip id only, so no URL maps to a
path on disk. Model text is inserted with textContent under a CSP that allows no inline script.
Labels go to ``mishap_annotations`` in the run's SQLite store; triggers refuse UPDATE and DELETE.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import random
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Sequence
from http import cookies
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from halluscope.errors import HalluscopeError
from halluscope.records import MishapAnnotation
from halluscope.store import STORE_NAME, Store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mishap_annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    answer_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('grounded', 'hallucinated')),
    note TEXT NOT NULL DEFAULT '',
    mode TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TRIGGER IF NOT EXISTS mishap_annotations_no_update BEFORE UPDATE ON mishap_annotations
BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
CREATE TRIGGER IF NOT EXISTS mishap_annotations_no_delete BEFORE DELETE ON mishap_annotations
BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
"""
ANNOTATOR = re.compile(r"^[\w .@-]{1,40}$", re.U)
MAX_NOTE = 2000
STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/app.js": ("app.js", "text/javascript; charset=utf-8"),
          "/app.css": ("app.css", "text/css; charset=utf-8")}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; media-src 'self'; connect-src 'self'; "
       "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
COOKIE = "mishap_token"


class Annotations:
    """The append-only label table; the latest row per (answer, annotator) is the label that counts."""

    def __init__(self, run_dir: str | Path) -> None:
        self._db = sqlite3.connect(Path(run_dir) / STORE_NAME, isolation_level=None, timeout=30.0, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def add(self, *, answer_id: str, annotator: str, label: str, note: str = "", mode: str = "independent") -> MishapAnnotation:
        a = MishapAnnotation(answer_id=answer_id, annotator=annotator, label=label, note=note, mode=mode,  # type: ignore[arg-type]
                             created=time.time())
        with self._lock:
            self._db.execute("INSERT INTO mishap_annotations (answer_id, annotator, label, note, mode, created) "
                             "VALUES (?, ?, ?, ?, ?, ?)", (a.answer_id, a.annotator, a.label, a.note, a.mode, a.created))
        return a

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


def annotation_items(run_dir: str | Path, *, sample: int | None = None, seed: int = 0) -> tuple[list[dict], dict[str, str]]:
    """The responses to annotate (all judgeable answers, or a seeded sample) and clip id -> audio path."""
    from halluscope.mishap.answers import load_answers
    from halluscope.mishap.clips import kept_clips
    from halluscope.mishap.judge import judgeable
    from halluscope.mishap.questions import load_questions
    from halluscope.mishap.rubrics import current_rubrics

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
    return items, {c.id: c.audio for c in clips.values()}


def _static(name: str) -> bytes:
    return (resources.files("halluscope") / "mishap" / "static" / name).read_bytes()


class AnnotationServer:
    """The app over one run directory; ``url`` carries the token for the first visit."""

    def __init__(self, run_dir: str | Path, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                 sample: int | None = None, seed: int = 0, allow_remote: bool = False) -> None:
        if not allow_remote and not ipaddress.ip_address(host if host != "localhost" else "127.0.0.1").is_loopback:
            raise HalluscopeError(f"refusing to serve annotations on {host}: the app binds to loopback by default; "
                                  "pass --allow-remote to expose it (the token still applies)")
        self.token = token or secrets.token_urlsafe(18)
        if len(self.token) < 8:
            raise HalluscopeError("the token must be at least 8 characters")
        self.items, self.audio = annotation_items(run_dir, sample=sample, seed=seed)
        self.by_id = {i["id"]: i for i in self.items}
        self.labels = Annotations(run_dir)
        app = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "halluscope-annotate"
            sys_version = ""

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str, extra: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Content-Security-Policy", CSP)
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Referrer-Policy", "no-referrer")
                self.send_header("Cache-Control", "no-store")
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _json(self, status: int, obj: object) -> None:
                self._send(status, json.dumps(obj, ensure_ascii=False).encode(), "application/json; charset=utf-8")

            def _text(self, status: int, text: str) -> None:
                self._send(status, text.encode(), "text/plain; charset=utf-8")

            def _authorised(self, query: dict) -> bool:
                given = self.headers.get("X-Mishap-Token")
                if given is None and (raw := self.headers.get("Cookie")):
                    jar = cookies.SimpleCookie()
                    try:
                        jar.load(raw)
                    except cookies.CookieError:
                        return False
                    given = jar[COOKIE].value if COOKIE in jar else None
                if given is None and "token" in query:
                    given = query["token"][0]
                return given is not None and hmac.compare_digest(given.encode(), app.token.encode())

            def do_GET(self) -> None:  # noqa: N802
                parts = urlsplit(self.path)
                query = parse_qs(parts.query)
                if not self._authorised(query):
                    return self._text(403, "forbidden: wrong or missing token")
                path = parts.path
                if path == "/" and "token" in query:  # first visit: move the token into an HttpOnly cookie
                    return self._send(303, b"", "text/plain", {
                        "Location": "/", "Set-Cookie": f"{COOKIE}={app.token}; HttpOnly; SameSite=Strict; Path=/"})
                if path in STATIC:
                    name, ctype = STATIC[path]
                    return self._send(200, _static(name), ctype)
                if path == "/api/items":
                    return self._json(200, {"items": app.items})
                if path == "/api/labels":
                    who = (query.get("annotator") or [""])[0]
                    mine = {a.answer_id: {"label": a.label, "note": a.note}
                            for (aid, w), a in app.labels.latest().items() if w == who}
                    return self._json(200, {"annotator": who, "labels": mine})
                if path.startswith("/audio/"):
                    clip_id = unquote(path[len("/audio/"):])
                    if clip_id not in app.audio:  # ids only: '..', '/' or anything else is simply unknown
                        return self._text(404, "not found")
                    return self._send(200, Path(app.audio[clip_id]).read_bytes(), "audio/wav")
                return self._text(404, "not found")

            do_HEAD = do_GET

            def do_POST(self) -> None:  # noqa: N802
                parts = urlsplit(self.path)
                if not self._authorised({}):
                    return self._text(403, "forbidden: wrong or missing token")
                if parts.path != "/api/label":
                    return self._text(404, "not found")
                n = int(self.headers.get("Content-Length") or 0)
                if n > 100_000:
                    return self._text(413, "too large")
                try:
                    body = json.loads(self.rfile.read(n) or b"{}")
                except ValueError:
                    return self._json(400, {"error": "body is not JSON"})
                aid, who = body.get("answer_id"), str(body.get("annotator", "")).strip()
                label, note, mode = body.get("label"), str(body.get("note") or "")[:MAX_NOTE], body.get("mode", "independent")
                if aid not in app.by_id:
                    return self._json(400, {"error": f"unknown answer_id {aid!r}"})
                if not ANNOTATOR.match(who):
                    return self._json(400, {"error": "annotator: 1-40 letters, digits, spaces, . @ _ -"})
                if label not in ("grounded", "hallucinated") or mode not in ("independent", "side_by_side"):
                    return self._json(400, {"error": "label must be grounded or hallucinated"})
                a = app.labels.add(answer_id=aid, annotator=who, label=label, note=note, mode=mode)
                return self._json(200, {"ok": True, "stored": a.model_dump()})

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._httpd = Server((host, port), Handler)
        self.host, self.port = host, self._httpd.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/?token={self.token}"

    def start(self) -> AnnotationServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
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

    ann = Annotations(run_dir)
    try:
        rows: Sequence[MishapAnnotation] = ann.all() if history else list(ann.latest().values())
    finally:
        ann.close()
    with Path(out).open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["answer_id", "annotator", "label", "note", "mode", "created"])
        for a in rows:
            w.writerow([a.answer_id, a.annotator, a.label, a.note, a.mode, a.created])
    return len(rows)
