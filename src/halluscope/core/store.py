"""One SQLite store (WAL) per run directory: every stage result, failure, model call and manifest, and the human
labels of the MISHAP annotation app (its table: core/labeltable.py, a part of Store). The Store is the one gateway to RUN/halluscope.sqlite in the library: readers
that need another view of the file (the projection's timings, the label table) get a method here."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from halluscope.core.errors import HalluscopeError
from halluscope.core.fs import RunLock
from halluscope.core.labeltable import LabelTable, SaveConflict, StoreBusy, busy_error  # noqa: F401 - re-exported
from halluscope.core.records import Record, RunManifest

R = TypeVar("R", bound=Record)

STORE_NAME = "halluscope.sqlite"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    stage TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    item_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    kind TEXT,
    payload TEXT,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 1,
    updated REAL NOT NULL,
    PRIMARY KEY (stage, fingerprint, item_id)
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    backend TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT,
    status TEXT NOT NULL,
    latency_s REAL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_key ON calls (key);
CREATE TABLE IF NOT EXISTS manifests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    command TEXT NOT NULL,
    payload TEXT NOT NULL,
    created REAL NOT NULL
);
"""


# The sample viewer's speech-quality ratings (seed 000, section 3.4): append-only, per annotator.
_QUALITY_SCHEMA = """
CREATE TABLE IF NOT EXISTS speech_quality (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    intelligibility TEXT NOT NULL CHECK (intelligibility IN ('fully', 'mostly', 'poorly', 'unintelligible')),
    fidelity TEXT NOT NULL CHECK (fidelity IN ('faithful', 'minor', 'major')),
    excluded INTEGER NOT NULL CHECK (excluded IN (0, 1)),
    note TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    save_id TEXT UNIQUE
);
CREATE TRIGGER IF NOT EXISTS speech_quality_no_update BEFORE UPDATE ON speech_quality
BEGIN SELECT RAISE(ABORT, 'speech-quality labels are append-only'); END;
CREATE TRIGGER IF NOT EXISTS speech_quality_no_delete BEFORE DELETE ON speech_quality
BEGIN SELECT RAISE(ABORT, 'speech-quality labels are append-only'); END;
"""
QUALITY_COLS = ("item_id", "annotator", "intelligibility", "fidelity", "excluded", "note", "created")


def check_run_dir(run_dir: str | Path, *, create: bool = False) -> Path:
    """``run_dir`` as a usable run directory (``create``: or a place to make one); HalluscopeError saying why not."""
    run_dir = Path(run_dir).expanduser()  # a quoted '~/runs/x' (no shell to expand it) is the user's home too
    store = run_dir / STORE_NAME
    if run_dir.exists() and not run_dir.is_dir():
        raise HalluscopeError(
            f"{run_dir} is a file, not a run directory; expected a directory made by "
            "`halluscope build ...`. Fix: pass the run folder (the one holding "
            f"{STORE_NAME}), or another run directory"
        )
    if not create and not store.is_file():
        what = (
            f"{store} is not a file"
            if store.exists()
            else (f"{run_dir} holds no {STORE_NAME}" if run_dir.is_dir() else f"{run_dir} does not exist")
        )
        raise HalluscopeError(
            f"no run at {run_dir} (expected a directory made by `halluscope build ...` or "
            f"`halluscope mishap clips`; {what}). "
            "Fix: check the path, or build the run first"
        )
    if run_dir.is_dir() and not os.access(run_dir, os.W_OK | os.X_OK):
        raise HalluscopeError(
            f"{run_dir} is not writable; halluscope records every command in the run's store. "
            "Fix: make it writable (chmod u+w) or copy the run somewhere writable"
        )
    if store.exists() and not (store.is_file() and os.access(store, os.R_OK | os.W_OK)):
        raise HalluscopeError(
            f"{store} is not a readable and writable file; expected the run's SQLite store. "
            "Fix: chmod u+rw it, or copy the run somewhere writable"
        )
    return run_dir


class Store(LabelTable):
    """Append-mostly record store; each write is its own transaction, so a kill -9 loses at most the item in flight."""

    def __init__(
        self,
        run_dir: str | Path,
        *,
        create: bool = True,
        lock: bool = True,
        threads: bool = False,
        readonly: bool = False,
        busy_s: float = 30.0,
    ) -> None:
        """Open (``create``: or make) RUN/halluscope.sqlite; ``lock``: hold RUN/.lock while open (one writer per run);
        ``threads``: the connection may be used from several threads (the label, rating and call readers serialise
        on a lock); ``readonly``: an existing store opened read-only (no lock, no schema change: the viewer);
        ``busy_s``: how long a write waits for another process's lock (the label and rating saves then raise
        StoreBusy).

        Every problem with the folder or the file is a HalluscopeError with the path and a fix, never a raw
        sqlite3 error: a missing run when ``create`` is False, a file where the folder should be, a read-only
        folder or store, a file that is not a SQLite database.
        """
        self.run_dir = Path(run_dir).expanduser()
        self.path = self.run_dir / STORE_NAME
        self.readonly, self.busy_s = readonly, busy_s
        create, lock = create and not readonly, lock and not readonly
        if not readonly or not self.path.is_file():  # reading needs no write access to the folder
            check_run_dir(self.run_dir, create=create)
        if create:
            try:
                self.run_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise HalluscopeError(
                    f"cannot create the run directory {self.run_dir} ({exc.strerror}); expected a "
                    "path whose parent folders are directories you can write to. Fix: pass another "
                    "run directory"
                ) from None
        self._lock = RunLock(self.run_dir).acquire() if lock else None
        self._mutex = threading.Lock()
        self._labels_ready = self._quality_ready = False
        # what readers above core cache for this open store (the spoken build the report's sections share); a
        # report's second process opens its own store and is handed this (report/sections.py)
        self.memo: dict = {}
        self._db: sqlite3.Connection = None  # type: ignore[assignment]  # set below; close() may run first
        try:
            if readonly:
                self._db = sqlite3.connect(
                    f"file:{self.path}?mode=ro", uri=True, timeout=busy_s, check_same_thread=not threads
                )
                self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # not a database: fails here
            else:
                self._db = sqlite3.connect(
                    self.path, isolation_level=None, timeout=busy_s, check_same_thread=not threads
                )
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self.close()
            raise HalluscopeError(
                f"{self.path}: cannot open the run store ({exc}); expected a writable SQLite file made by "
                "halluscope. Fix: if it is damaged, move it away (the run's outputs stay) and re-run the command "
                "that built the run, or pass another run directory"
            ) from None

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def version(self) -> tuple[int, int]:
        """Changes when anything is written to the store, by this connection or another: a reader's cache key."""
        with self._mutex:
            return self._db.execute("PRAGMA data_version").fetchone()[0], self._db.total_changes

    # -- stage results -------------------------------------------------------------------------
    def done_ids(self, stage: str, fingerprint: str) -> set[str]:
        rows = self._db.execute(
            "SELECT item_id FROM results WHERE stage=? AND fingerprint=? AND status='ok'",
            (stage, fingerprint),
        )
        return {r[0] for r in rows}

    def put(self, stage: str, fingerprint: str, item_id: str, record: Record) -> None:
        self._db.execute(
            "INSERT INTO results (stage, fingerprint, item_id, status, kind, payload, error, attempts, updated)"
            " VALUES (?, ?, ?, 'ok', ?, ?, NULL, 1, ?)"
            " ON CONFLICT (stage, fingerprint, item_id) DO UPDATE SET status='ok', kind=excluded.kind,"
            " payload=excluded.payload, error=NULL, attempts=results.attempts+1, updated=excluded.updated",
            (stage, fingerprint, item_id, type(record).__name__, record.model_dump_json(), time.time()),
        )

    def fail(self, stage: str, fingerprint: str, item_id: str, error: str) -> None:
        self._db.execute(
            "INSERT INTO results (stage, fingerprint, item_id, status, kind, payload, error, attempts, updated)"
            " VALUES (?, ?, ?, 'failed', NULL, NULL, ?, 1, ?)"
            " ON CONFLICT (stage, fingerprint, item_id) DO UPDATE SET status='failed', payload=NULL,"
            " error=excluded.error, attempts=results.attempts+1, updated=excluded.updated",
            (stage, fingerprint, item_id, error, time.time()),
        )

    def results(self, stage: str, fingerprint: str, cls: type[R]) -> dict[str, R]:
        rows = self._db.execute(
            "SELECT item_id, payload FROM results WHERE stage=? AND fingerprint=? AND status='ok' ORDER BY item_id",
            (stage, fingerprint),
        )
        return {item_id: cls.model_validate_json(payload) for item_id, payload in rows}

    def result(self, stage: str, fingerprint: str, item_id: str, cls: type[R]) -> R | None:
        """One item's ok result (None when it has none); thread-safe on a ``threads`` store."""
        with self._mutex:
            row = self._db.execute(
                "SELECT payload FROM results WHERE stage=? AND fingerprint=? AND item_id=? AND status='ok'",
                (stage, fingerprint, item_id),
            ).fetchone()
        return None if row is None else cls.model_validate_json(row[0])

    def digest(self, stages: dict[str, str], *, ids_only: bool = False) -> str:
        """16 hex of one sha256 over the ok results of these stage -> fingerprint parts, in item id order: each id
        and its stored payload (``ids_only``: the ids alone). What a derived record read, by content, unparsed."""
        rows: dict[str, str] = {}
        what = "item_id, ''" if ids_only else "item_id, payload"
        for stage, fp in stages.items():
            q = f"SELECT {what} FROM results WHERE stage=? AND fingerprint=? AND status='ok'"
            rows.update(self._db.execute(q, (stage, fp)).fetchall())
        h = hashlib.sha256()
        for k in sorted(rows):
            h.update(f"\x1d{k}\x1f{rows[k]}".encode("utf-8", "surrogatepass"))
        return h.hexdigest()[:16]

    def failures(self, stage: str, fingerprint: str) -> dict[str, str]:
        rows = self._db.execute(
            "SELECT item_id, error FROM results WHERE stage=? AND fingerprint=? AND status='failed' ORDER BY item_id",
            (stage, fingerprint),
        )
        return dict(rows.fetchall())

    def attempts(self, stage: str, fingerprint: str) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT item_id, attempts FROM results WHERE stage=? AND fingerprint=?", (stage, fingerprint)
        )
        return dict(rows.fetchall())

    def updated(self, stage: str, fingerprint: str) -> dict[str, float]:
        """item id -> when its result was written (time.time()), for the stage's ok results."""
        rows = self._db.execute(
            "SELECT item_id, updated FROM results WHERE stage=? AND fingerprint=? AND status='ok'", (stage, fingerprint)
        )
        return dict(rows.fetchall())

    def count(self, stage: str | None = None) -> int:
        if stage is None:
            return self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM results WHERE stage=?", (stage,)).fetchone()[0]

    # -- model calls (stored before parsing; identical requests are served from here) -----------
    def log_call(
        self,
        *,
        key: str,
        backend: str,
        request: dict,
        response: dict | None,
        status: str,
        latency_s: float | None,
    ) -> int:
        cur = self._db.execute(
            "INSERT INTO calls (key, backend, request, response, status, latency_s, created) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                backend,
                json.dumps(request, ensure_ascii=False),
                json.dumps(response, ensure_ascii=False),
                status,
                latency_s,
                time.time(),
            ),
        )
        return int(cur.lastrowid)

    def cached_call(self, key: str) -> dict | None:
        row = self._db.execute(
            "SELECT response FROM calls WHERE key=? AND status='ok' ORDER BY id DESC LIMIT 1", (key,)
        ).fetchone()
        return None if row is None else json.loads(row[0])

    def latest_call(self, key: str) -> tuple[dict | None, str] | None:
        """The latest stored call under ``key`` whatever its status: (response, status), or None."""
        with self._mutex:
            row = self._db.execute(
                "SELECT response, status FROM calls WHERE key=? ORDER BY id DESC LIMIT 1", (key,)
            ).fetchone()
        return None if row is None else (json.loads(row[0]) if row[0] else None, row[1])

    def calls(self) -> Iterator[dict]:
        for row in self._db.execute("SELECT key, backend, request, response, status, latency_s FROM calls ORDER BY id"):
            yield dict(zip(("key", "backend", "request", "response", "status", "latency_s"), row))

    # -- manifests -------------------------------------------------------------------------------
    def add_manifest(self, manifest: RunManifest) -> None:
        self._db.execute(
            "INSERT INTO manifests (command, payload, created) VALUES (?, ?, ?)",
            (manifest.command, manifest.model_dump_json(), time.time()),
        )

    def latest_manifest(self, command: str) -> RunManifest | None:
        row = self._db.execute(
            "SELECT payload FROM manifests WHERE command=? ORDER BY id DESC LIMIT 1", (command,)
        ).fetchone()
        return None if row is None else RunManifest.model_validate_json(row[0])

    def manifests(self) -> list[RunManifest]:
        return [
            RunManifest.model_validate_json(p) for (p,) in self._db.execute("SELECT payload FROM manifests ORDER BY id")
        ]

    # -- human labels (the MISHAP annotation app): LabelTable, core/labeltable.py ---------------------------

    # -- speech-quality ratings (the sample viewer) ---------------------------------------------------
    def _quality_table(self) -> bool:
        if self._quality_ready or self.readonly:
            return self._quality_ready or self._has_table("speech_quality")
        try:
            self._db.executescript(_QUALITY_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise HalluscopeError(
                f"{self.path}: cannot open the speech-quality table ({exc}); expected a writable "
                "halluscope store. Fix: check the file's permissions"
            ) from None
        self._quality_ready = True
        return True

    def save_quality(self, row: dict, save_id: str) -> tuple[dict, bool]:
        """Append one rating (QUALITY_COLS); a ``save_id`` already stored returns that row and False, or
        HalluscopeError when it was stored with a different rating; StoreBusy when another process holds the lock."""
        try:
            return self._save_quality(row, save_id)
        except sqlite3.OperationalError as exc:
            raise busy_error(exc, self.path, self.busy_s) from None

    def _save_quality(self, row: dict, save_id: str) -> tuple[dict, bool]:
        with self._mutex:
            self._quality_table()
            old = self._db.execute(
                f"SELECT {', '.join(QUALITY_COLS)} FROM speech_quality WHERE save_id=?", (save_id,)
            ).fetchone()
            if old is not None:
                stored = _rating(old)
                if any(stored[k] != row[k] for k in QUALITY_COLS[:6]):
                    raise HalluscopeError(
                        f"save id {save_id} was already stored with a different rating; a new "
                        "rating needs a new save id"
                    )
                return stored, False
            self._db.execute(
                f"INSERT INTO speech_quality ({', '.join(QUALITY_COLS)}, save_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*(int(row[k]) if k == "excluded" else row[k] for k in QUALITY_COLS), save_id),
            )
        return row, True

    def ratings(self) -> list[dict]:
        """Every speech-quality rating, oldest first ([] while there is no table)."""
        with self._mutex:
            if not self._quality_table():
                return []
            rows = self._db.execute(f"SELECT {', '.join(QUALITY_COLS)} FROM speech_quality ORDER BY id").fetchall()
        return [_rating(r) for r in rows]


def _rating(r: tuple) -> dict:
    d = dict(zip(QUALITY_COLS, r))
    d["excluded"] = bool(d["excluded"])
    return d
