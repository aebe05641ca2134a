"""The MISHAP annotation app's label table (seed 001, App. B.5), as a part of the run's Store (core/store.py, the one
gateway to RUN/halluscope.sqlite): append-only rows, the latest per (answer, annotator) counts; each row keeps the
digest of the response text labelled (core/provenance.py), NULL in tables made before it."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from halluscope.core.errors import HalluscopeError
from halluscope.core.records import MishapAnnotation


class StoreBusy(HalluscopeError):
    """Another process held the store's write lock for longer than the busy timeout (the web apps answer 503)."""


def busy_error(exc: sqlite3.OperationalError, path: Path, busy_s: float) -> HalluscopeError:
    if "locked" in str(exc) or "busy" in str(exc):
        return StoreBusy(f"{path} is locked by another process (waited {busy_s:g} s); retry when it is done")
    return HalluscopeError(f"{path}: cannot write ({exc}). Fix: check the file's permissions and free disk space")


# The MISHAP annotation app's labels (seed 001, App. B.5): append-only, the latest row per (answer, annotator) counts.
_LABEL_SCHEMA = """
CREATE TABLE IF NOT EXISTS mishap_annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    answer_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    label TEXT NOT NULL CHECK (label IN ('grounded', 'hallucinated')),
    note TEXT NOT NULL DEFAULT '',
    mode TEXT NOT NULL,
    created REAL NOT NULL,
    save_id TEXT,
    answer_sha256 TEXT
);
CREATE TRIGGER IF NOT EXISTS mishap_annotations_no_update BEFORE UPDATE ON mishap_annotations
BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
CREATE TRIGGER IF NOT EXISTS mishap_annotations_no_delete BEFORE DELETE ON mishap_annotations
BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
"""
_LABEL_COLS = "answer_id, annotator, label, note, mode, created"
# the digest of the response text labelled (core/provenance.py); tables made before it have no such column
_LABEL_FIELDS = (*_LABEL_COLS.split(", "), "answer_sha256")


class SaveConflict(HalluscopeError):
    """A save id already stored with a different label."""


class LabelTable:
    """The label methods of Store, and its table check (Store sets ``_db``, ``_mutex``, ``readonly``, ``path``,
    ``busy_s``)."""

    _db: sqlite3.Connection
    _mutex: threading.Lock
    readonly: bool
    path: Path
    busy_s: float
    _labels_ready: bool = False

    def _has_table(self, name: str) -> bool:
        return (
            self._db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone()
            is not None
        )

    def _label_table(self) -> bool:
        """Make the label table on first use; False for a read-only store that has none (no labels yet)."""
        if self._labels_ready or self.readonly:
            return self._labels_ready or self._has_table("mishap_annotations")
        try:
            self._db.executescript(_LABEL_SCHEMA)
            cols = {r[1] for r in self._db.execute("PRAGMA table_info(mishap_annotations)")}
            if "save_id" not in cols:
                self._db.execute(
                    "ALTER TABLE mishap_annotations ADD COLUMN save_id TEXT"
                )  # tables from before save ids
            if "answer_sha256" not in cols:  # tables from before labels kept the digest of the text they read
                self._db.execute("ALTER TABLE mishap_annotations ADD COLUMN answer_sha256 TEXT")
            self._db.execute(
                "CREATE UNIQUE INDEX IF NOT EXISTS mishap_annotations_save_id ON mishap_annotations(save_id)"
            )
        except sqlite3.DatabaseError as exc:
            raise HalluscopeError(
                f"{self.path}: cannot open the label table ({exc}); expected a writable halluscope "
                "store. Fix: check the file's permissions, or restore it from a copy"
            ) from None
        self._labels_ready = True
        return True

    def _label_cols(self) -> str:
        """The columns a label reads: a read-only store of a table made before digests reads NULL for it."""
        cols = {r[1] for r in self._db.execute("PRAGMA table_info(mishap_annotations)")}
        return _LABEL_COLS + (", answer_sha256" if "answer_sha256" in cols else ", NULL")

    def save_label(self, label: MishapAnnotation, save_id: str | None = None) -> tuple[MishapAnnotation, bool]:
        """Append one label; with a ``save_id`` already stored, that row and False (a retry stores nothing), or
        SaveConflict when it was stored with a different label."""
        try:
            return self._save_label(label, save_id)
        except sqlite3.OperationalError as exc:
            raise busy_error(exc, self.path, self.busy_s) from None

    def _save_label(self, label: MishapAnnotation, save_id: str | None) -> tuple[MishapAnnotation, bool]:
        with self._mutex:
            self._label_table()
            if save_id is not None and (old := self._label_by_save_id(save_id)) is not None:
                return _same_label(old, label, save_id), False
            a = label
            try:
                self._db.execute(
                    f"INSERT INTO mishap_annotations ({_LABEL_COLS}, save_id, answer_sha256) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (a.answer_id, a.annotator, a.label, a.note, a.mode, a.created, save_id, a.answer_sha256),
                )
            except sqlite3.IntegrityError:  # another process stored this save id in between
                old = self._label_by_save_id(save_id) if save_id is not None else None
                if old is None:
                    raise
                return _same_label(old, label, save_id), False  # type: ignore[arg-type]
        return label, True

    def _label_by_save_id(self, save_id: str) -> MishapAnnotation | None:
        r = self._db.execute(
            f"SELECT {self._label_cols()} FROM mishap_annotations WHERE save_id = ?", (save_id,)
        ).fetchone()
        return None if r is None else _label(r)

    def labels(self) -> list[MishapAnnotation]:
        """Every label row, oldest first."""
        with self._mutex:
            rows = (
                self._db.execute(f"SELECT {self._label_cols()} FROM mishap_annotations ORDER BY id").fetchall()
                if self._label_table()
                else []
            )
        return [_label(r) for r in rows]

    def latest_labels(self) -> dict[tuple[str, str], MishapAnnotation]:
        """(answer id, annotator) -> the latest label row."""
        return {(a.answer_id, a.annotator): a for a in self.labels()}


def _label(r: tuple) -> MishapAnnotation:
    return MishapAnnotation(**dict(zip(_LABEL_FIELDS, r)))


def _same_label(old: MishapAnnotation, new: MishapAnnotation, save_id: str) -> MishapAnnotation:
    keys = ("answer_id", "annotator", "label", "note", "mode")
    if any(getattr(old, k) != getattr(new, k) for k in keys):
        raise SaveConflict(
            f"save id {save_id} was already stored with a different label "
            f"({', '.join(f'{k}={getattr(old, k)!r}' for k in keys[:3])}); a new label needs a new save id"
        )
    return old
